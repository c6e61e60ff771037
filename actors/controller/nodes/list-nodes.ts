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

/** Which node records to list: those named after `after`, at most `limit` of them. */
export interface NodeRange {
  after?: string;
  limit?: number;
}

interface ListedRow {
  name: string;
  lifecycle_state: string;
  overlay_address: string | null;
  version_running: string | null;
  last_seen_at: Date | string | null;
}

/**
 * The node records by name, with last contact said as a fact relative to `now`: every one, or
 * the `range.limit` first named after `range.after`.
 *
 * Names are compared byte by byte (COLLATE "C"), not in the database's locale, so the order,
 * and so which nodes a page holds, is the same on PGlite and on any PostgreSQL server, and is
 * the order of JavaScript's `<` on names (which are ASCII). Only the columns shown are read:
 * a node's inventory and profile can be large, and a page reads a thousand rows.
 */
export async function listNodeRecords(sql: Sql, now: Date, range: NodeRange = {}): Promise<NodeListing[]> {
  const rows = await sql.query<ListedRow>(
    `SELECT name, lifecycle_state, overlay_address, version_running, last_seen_at FROM nodes
     WHERE $1::text IS NULL OR name COLLATE "C" > $1::text
     ORDER BY name COLLATE "C"
     LIMIT $2::bigint`,
    [range.after ?? null, range.limit ?? null],
  );
  return rows.map((row) => {
    const lastSeen = row.last_seen_at === null ? null : new Date(row.last_seen_at);
    return {
      name: row.name,
      lifecycle_state: row.lifecycle_state,
      address: row.overlay_address,
      version_running: row.version_running,
      last_seen_at: lastSeen === null ? null : lastSeen.toISOString(),
      last_seen: formatLastSeen(lastSeen, now),
    };
  });
}
