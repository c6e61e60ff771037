import type { Report } from '../../../schema/report';
import type { SqlStore } from '../store/sql-store';
import { recordReport, type RecordReportResult } from '../store/reports.repo';
import { reportSummary } from './report-summary';

/**
 * Keeps a report in the node's accounts (recordReport: by epoch, then sequence, then report
 * sequence; an older one refused and counted) and, when it is kept, the brief of it on the
 * node's row — which declaration it answers and how its resources came out — in the same
 * transaction, so the row never describes a report the accounts do not hold.
 */
export async function recordNodeReport(store: SqlStore, report: Report, receivedAt: Date): Promise<RecordReportResult> {
  return store.transaction(async (tx) => {
    const recorded = await recordReport({ transaction: (fn) => fn(tx) }, report, receivedAt);
    if (recorded.accepted) {
      await tx.query(
        `UPDATE nodes SET report_generation = $2, report_declaration_digest = $3, report_summary = $4, reported_at = $5
         WHERE name = $1`,
        [report.node, report.generation, report.declaration_digest, JSON.stringify(reportSummary(report)), receivedAt],
      );
    }
    return recorded;
  });
}
