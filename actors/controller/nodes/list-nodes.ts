import type { Sql } from '../store/sql-store';
import { formatLastSeen } from './format-last-seen';

/** One node as `mesh-control nodes` shows it. */
export interface NodeListing {
  name: string;
  /** enrolled, disconnected, revoked or released, as the store keeps it. */
  lifecycle_state: string;
  /** The node's overlay address, once one is assigned. */
  address: string | null;
  /** The host version the node last said it runs (not what is installed). */
  version_running: string | null;
  /** Last contact, ISO-8601, or null when never heard from. */
  last_seen_at: string | null;
  /** The same as a fact for a person: `last seen 4 days ago`, `never seen`. */
  last_seen: string;
}

/**
 * Every node record, by name, with its last contact said as a fact relative to `now`.
 *
 * Rows are read whole as JSON (`to_jsonb`), so the listing shows the overlay address from the
 * column `overlay_address` once the migration that assigns addresses adds it, and null before.
 */
export async function listNodeRecords(sql: Sql, now: Date): Promise<NodeListing[]> {
  const rows = await sql.query<{ node: Record<string, unknown> }>('SELECT to_jsonb(n) AS node FROM nodes n ORDER BY n.name');
  return rows.map(({ node }) => {
    const lastSeen = typeof node.last_seen_at === 'string' ? new Date(node.last_seen_at) : null;
    return {
      name: String(node.name),
      lifecycle_state: String(node.lifecycle_state),
      address: typeof node.overlay_address === 'string' ? node.overlay_address.replace(/\/32$/, '') : null,
      version_running: typeof node.version_running === 'string' ? node.version_running : null,
      last_seen_at: lastSeen === null ? null : lastSeen.toISOString(),
      last_seen: formatLastSeen(lastSeen, now),
    };
  });
}
