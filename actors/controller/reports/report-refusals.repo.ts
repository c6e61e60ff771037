import { countRefusalOf } from '../store/reports.repo';
import type { Sql } from '../store/sql-store';

/**
 * Reasons a report is refused before its order is even looked at (see
 * migrations/0034_report_refusals_subject.sql): it names another node than the subject it
 * came on, or it does not match the report contract.
 */
export type ReportRejection = 'wrong_subject' | 'malformed';

/**
 * Counts one refused report against `node` (the node whose subject it came on) and `reason`,
 * or against the one unknown-sender count when the store has no such node (countRefusalOf).
 */
export async function countReportRejection(sql: Sql, node: string, reason: ReportRejection, at: Date): Promise<void> {
  await countRefusalOf(sql, node, reason, at);
}
