import type { Heartbeat } from '../../../schema/heartbeat';
import type { Sql } from '../store/sql-store';

/**
 * Records a heartbeat in one statement: the node was heard from at `at` (last seen never moves
 * back), and whether its host says it cannot hear its declarations (set while it says so,
 * cleared by the first heartbeat that does not). False when there is no such node.
 */
export async function recordHeartbeat(sql: Sql, name: string, heartbeat: Pick<Heartbeat, 'deaf'>, at: Date): Promise<boolean> {
  const rows = await sql.query(
    'UPDATE nodes SET last_seen_at = GREATEST(last_seen_at, $2), deaf_since = $3, deaf_reason = $4 WHERE name = $1 RETURNING name',
    [name, at, heartbeat.deaf?.since ?? null, heartbeat.deaf?.reason ?? null],
  );
  return rows.length === 1;
}
