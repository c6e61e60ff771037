import { STATUS_LIST_MAX, type ControllerStatus } from '../../../schema/controller-status';
import type { HostKind } from '../../../schema/resource';
import type { Sql } from '../store/sql-store';

type Iso = Date | string;
const iso = (value: Iso): string => new Date(value).toISOString();

interface DeliveryRow {
  name: string;
  host_kind: HostKind | null;
  lifecycle_state: string;
  generation: number | string;
  sent_at: Iso;
  failed: number;
  refused: string | null;
  reported_at: Iso | null;
  delivery: 'outstanding' | 'failed';
  of_kind: number;
}

/**
 * Each node's latest declaration sent, judged by its report: outstanding while the node has not
 * reported on that generation, failed once it has and something in it failed or it was
 * refused. Counted in full; the first STATUS_LIST_MAX of each named, oldest sent first.
 */
export async function readDeclarationDelivery(sql: Sql): Promise<ControllerStatus['declarations']> {
  const rows = await sql.query<DeliveryRow>(
    `WITH latest AS (
       SELECT n.name, COALESCE(n.host_kind, n.profile->>'host_kind') AS host_kind, n.lifecycle_state, d.generation, d.sent_at,
              n.report_generation, n.reported_at, COALESCE((n.report_summary->'outcomes'->>'failed')::int, 0) AS failed,
              n.report_summary->>'refused' AS refused
         FROM nodes n
         JOIN LATERAL (SELECT generation, sent_at FROM declarations WHERE node = n.name ORDER BY generation DESC LIMIT 1) d ON true
        WHERE n.lifecycle_state IN ('enrolled', 'disconnected')
          -- Only nodes that may be either: given a generation past their last report, or whose
          -- last report failed or refused; a fleet at rest is read from nodes alone.
          AND (n.declaration_generation > COALESCE(n.report_generation, 0)
               OR COALESCE((n.report_summary->'outcomes'->>'failed')::int, 0) > 0 OR n.report_summary->>'refused' IS NOT NULL)
     ), judged AS (
       SELECT *, CASE WHEN report_generation IS NULL OR report_generation < generation THEN 'outstanding'
                      WHEN failed > 0 OR refused IS NOT NULL THEN 'failed' END AS delivery
         FROM latest
     ), ranked AS (
       SELECT *, count(*) OVER (PARTITION BY delivery)::int AS of_kind,
              row_number() OVER (PARTITION BY delivery ORDER BY sent_at, name COLLATE "C") AS place
         FROM judged WHERE delivery IS NOT NULL
     )
     SELECT name, host_kind, lifecycle_state, generation, sent_at, failed, refused, reported_at, delivery, of_kind
       FROM ranked WHERE place <= $1 ORDER BY delivery, place`,
    [STATUS_LIST_MAX],
  );
  const outstanding = rows.filter((row) => row.delivery === 'outstanding');
  const failed = rows.filter((row) => row.delivery === 'failed');
  return {
    outstanding: {
      count: outstanding[0]?.of_kind ?? 0,
      nodes: outstanding.map((row) => ({ node: row.name, host_kind: row.host_kind, lifecycle_state: row.lifecycle_state, generation: Number(row.generation), sent_at: iso(row.sent_at) })),
    },
    failed: {
      count: failed[0]?.of_kind ?? 0,
      nodes: failed.map((row) => ({ node: row.name, generation: Number(row.generation), failed: row.failed, refused: row.refused, reported_at: row.reported_at === null ? null : iso(row.reported_at) })),
    },
  };
}
