import type { PlanSend } from '../../../machines/plan.machine';
import type { Report } from '../../../schema/report';
import type { Sql } from '../store/sql-store';

/** What the first machine's report after the send says: it applied, or it failed (and why). */
export type FirstVerdict = { kind: 'applied'; generation: number } | { kind: 'failed'; reason: string; generation: number };

interface ReportRow {
  generation: number;
  declaration_digest: string | null;
  results: Report['results'];
  refused: Report['refused'] | null;
  sent_digest: string | null;
}

/**
 * Reads the first machine's verdict on a send from its reports: the newest kept report that
 * answers the declaration sent (or a later one: a node sent again since, for new peers say,
 * still carries the revision) or refuses one of them. A report on an earlier declaration says
 * nothing about this one, however recent it is. Undefined while there is no such report.
 *
 * A report counts only when the declaration it names is one this controller recorded (its
 * generation and digest agree); it applied when no resource failed and none was refused, and
 * failed otherwise, naming the resources and what the host said.
 */
export async function judgeFirstReport(sql: Sql, node: string, send: PlanSend): Promise<FirstVerdict | undefined> {
  const [row] = await sql.query<ReportRow>(
    `SELECT r.generation, r.declaration_digest, r.results, r.refused, d.digest AS sent_digest
     FROM reports r LEFT JOIN declarations d ON d.node = r.node AND d.generation = r.generation
     WHERE r.node = $1 AND (r.generation >= $2 OR (r.refused IS NOT NULL AND (r.refused->>'generation')::bigint >= $2))
     ORDER BY r.epoch DESC, r.sequence DESC, r.report_sequence DESC LIMIT 1`,
    [node, send.generation],
  );
  if (row === undefined) return undefined;
  if (row.refused !== null && row.refused !== undefined && (row.refused.generation ?? 0) >= send.generation) {
    const detail = row.refused.detail === undefined ? '' : `: ${row.refused.detail}`;
    return { kind: 'failed', reason: `it refused the declaration (${row.refused.reason}${detail})`, generation: row.refused.generation ?? send.generation };
  }
  if (row.declaration_digest === null || row.declaration_digest !== row.sent_digest) return undefined;
  const troubled = row.results.filter((result) => result.outcome === 'failed' || result.outcome === 'refused');
  if (troubled.length === 0) return { kind: 'applied', generation: row.generation };
  const named = troubled.map((result) => `${result.key} ${result.outcome}${result.detail === undefined ? '' : ` (${result.detail})`}`);
  return { kind: 'failed', reason: named.join('; '), generation: row.generation };
}
