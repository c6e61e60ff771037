import type { Heartbeat } from '../../../schema/heartbeat';
import type { Sql } from '../store/sql-store';

/** What recording a heartbeat did. */
export interface HeartbeatRecorded {
  /** False when there is no such node, or a controller under a later epoch has acted since. */
  recorded: boolean;
  /** When it brought a `disconnected` node back: how long it was away, by the controller's clock. */
  back?: { from: Date; seconds: number };
  /** True when the node was sent a declaration it has not reported on yet (read in the same statement); absent otherwise. */
  unreported?: true;
}

interface RecordedRow {
  came_back: boolean;
  away_from: Date | string | null;
  unreported: boolean;
}

/**
 * Records a heartbeat in one statement: the node was heard from at `at` (last seen never moves
 * back), its kind, whether its host says it cannot hear its declarations (set while it says so,
 * cleared by the first heartbeat that does not), and the host's own account of its last
 * absence when the heartbeat carries one. A `disconnected` node is `enrolled` again, its
 * absence kept (from the start of its silence to `at`).
 *
 * Fenced like every write of the acting controller: nothing is written once a controller under
 * a later epoch than `epoch` has raised the store's floor. Only a node holding an identity
 * changes state; a revoked or released one's last contact is still kept as a fact.
 *
 * No row is read first (a heartbeat is the controller's most frequent write, and locking the
 * row in a CTE costs a third more): the node came back when its absence now ends at `at`.
 * Two heartbeats of one node taken in the same millisecond after a return both say so.
 */
export async function recordHeartbeat(
  sql: Sql,
  name: string,
  heartbeat: Pick<Heartbeat, 'deaf' | 'host_kind' | 'seconds_since_linked'>,
  at: Date,
  epoch: number,
): Promise<HeartbeatRecorded> {
  const hostAway = heartbeat.seconds_since_linked !== null && heartbeat.seconds_since_linked > 0 ? heartbeat.seconds_since_linked : null;
  const rows = await sql.query<RecordedRow>(
    `UPDATE nodes n SET
       last_seen_at = GREATEST(n.last_seen_at, $2),
       deaf_since = $3, deaf_reason = $4,
       host_kind = $5,
       host_away_seconds = COALESCE($6::double precision, n.host_away_seconds),
       host_away_reported_at = CASE WHEN $6::double precision IS NULL THEN n.host_away_reported_at ELSE $2 END,
       lifecycle_state = CASE WHEN n.lifecycle_state = 'disconnected' THEN 'enrolled' ELSE n.lifecycle_state END,
       away_from = CASE WHEN n.lifecycle_state = 'disconnected' THEN LEAST(COALESCE(n.disconnected_since, n.last_seen_at, $2), $2) ELSE n.away_from END,
       away_until = CASE WHEN n.lifecycle_state = 'disconnected' THEN $2 ELSE n.away_until END,
       disconnected_since = NULL,
       updated_at = CASE WHEN n.lifecycle_state = 'disconnected' THEN $2 ELSE n.updated_at END
     WHERE n.name = $1
       AND NOT EXISTS (SELECT 1 FROM controller_epoch WHERE epoch > $7)
     RETURNING n.away_until IS NOT DISTINCT FROM $2::timestamptz AS came_back, n.away_from,
               n.declaration_generation > COALESCE(n.report_generation, 0) AS unreported`,
    [name, at, heartbeat.deaf?.since ?? null, heartbeat.deaf?.reason ?? null, heartbeat.host_kind, hostAway, epoch],
  );
  const [row] = rows;
  if (row === undefined) return { recorded: false };
  const unreported = row.unreported === true ? { unreported: true as const } : {};
  if (!row.came_back || row.away_from === null) return { recorded: true, ...unreported };
  const from = new Date(row.away_from);
  return { recorded: true, ...unreported, back: { from, seconds: Math.max(0, Math.round((at.getTime() - from.getTime()) / 1000)) } };
}
