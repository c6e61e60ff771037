import { STATUS_LIST_MAX, type ControllerStatus } from '../../../schema/controller-status';
import type { HostKind } from '../../../schema/resource';
import type { Sql } from '../store/sql-store';

type Iso = Date | string;
const iso = (value: Iso): string => new Date(value).toISOString();

/** Nodes holding an identity by kind, and the first STATUS_LIST_MAX shown disconnected, longest away first. */
export async function readPresence(sql: Sql): Promise<Pick<ControllerStatus['nodes'], 'by_kind' | 'disconnected'>> {
  const [byKind, away] = await Promise.all([
    sql.query<{ kind: string; count: number }>(
      `SELECT COALESCE(host_kind, profile->>'host_kind', 'unknown') AS kind, count(*)::int AS count FROM nodes
        WHERE lifecycle_state IN ('enrolled', 'disconnected') GROUP BY 1 ORDER BY 1`,
    ),
    sql.query<{ name: string; host_kind: HostKind | null; since: Iso | null }>(
      `SELECT name, COALESCE(host_kind, profile->>'host_kind') AS host_kind, COALESCE(disconnected_since, last_seen_at) AS since FROM nodes
        WHERE lifecycle_state = 'disconnected' ORDER BY since NULLS FIRST, name COLLATE "C" LIMIT $1`,
      [STATUS_LIST_MAX],
    ),
  ]);
  return {
    by_kind: Object.fromEntries(byKind.map((row) => [row.kind, row.count])),
    disconnected: away.map((row) => ({ node: row.name, host_kind: row.host_kind, since: row.since === null ? null : iso(row.since) })),
  };
}
