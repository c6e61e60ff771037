import type { Sql } from '../store/sql-store';

/**
 * Reasons a report is refused before its order is even looked at (see
 * migrations/0034_report_refusals_subject.sql): it names another node than the subject it
 * came on, or it does not match the report contract.
 */
export type ReportRejection = 'wrong_subject' | 'malformed';

/** Counts one refused report against `node` (the node whose subject it came on) and `reason`. */
export async function countReportRejection(sql: Sql, node: string, reason: ReportRejection, at: Date): Promise<void> {
  await sql.query(
    `INSERT INTO report_refusals (node, reason, count, first_at, last_at) VALUES ($1, $2, 1, $3, $3)
     ON CONFLICT (node, reason) DO UPDATE
       SET count = report_refusals.count + 1, last_at = GREATEST(report_refusals.last_at, excluded.last_at)`,
    [node, reason, at],
  );
}
