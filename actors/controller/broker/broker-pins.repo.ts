import type { Sql } from '../store/sql-store';

/** A node that holds an identity, and the broker certificates its latest heartbeat said it pins. */
export interface NodePins {
  node: string;
  lifecycle_state: string;
  /** Null when no heartbeat has said it yet (a host older than the rotation, or never heard). */
  pins: string[] | null;
  /** When the heartbeat that said them arrived. */
  pins_at: Date | null;
}

/**
 * Keeps what a node's heartbeat says it pins. Written only when it changed, so the heartbeat's
 * own write (recordHeartbeat) stays the only one of an ordinary heartbeat.
 */
export async function recordBrokerPins(sql: Sql, node: string, pins: readonly string[], at: Date): Promise<void> {
  await sql.query(
    `UPDATE nodes SET broker_pins = $2, broker_pins_at = $3
     WHERE name = $1 AND broker_pins IS DISTINCT FROM $2::jsonb`,
    [node, JSON.stringify(pins), at],
  );
}

/** Every node holding an identity (enrolled or disconnected), with what it pins, by name. */
export async function listNodePins(sql: Sql): Promise<NodePins[]> {
  const rows = await sql.query<{ name: string; lifecycle_state: string; broker_pins: unknown; broker_pins_at: Date | string | null }>(
    `SELECT name, lifecycle_state, broker_pins, broker_pins_at FROM nodes
     WHERE lifecycle_state IN ('enrolled', 'disconnected') ORDER BY name`,
  );
  return rows.map((row) => {
    const pins = typeof row.broker_pins === 'string' ? (JSON.parse(row.broker_pins) as unknown) : row.broker_pins;
    return {
      node: row.name,
      lifecycle_state: row.lifecycle_state,
      pins: Array.isArray(pins) ? pins.filter((pin): pin is string => typeof pin === 'string') : null,
      pins_at: row.broker_pins_at === null ? null : new Date(row.broker_pins_at),
    };
  });
}
