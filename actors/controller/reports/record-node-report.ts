import type { Report } from '../../../schema/report';
import { durationsOf } from '../durations/duration-recorder';
import type { SqlStore } from '../store/sql-store';
import { recordReport, type RecordReportResult } from '../store/reports.repo';
import { reportSummary } from './report-summary';

/**
 * Keeps a report in the node's accounts (recordReport: by epoch, then sequence, then report
 * sequence; an older one refused and counted) and, when it is kept, the brief of it on the
 * node's row — which declaration it answers and how its resources came out — in the same
 * transaction, so the row never describes a report the accounts do not hold.
 *
 * The first kept report on a generation the controller sent is an apply heard: the time from
 * that send to now is counted (durationsOf), once the transaction has committed.
 */
export async function recordNodeReport(store: SqlStore, report: Report, receivedAt: Date): Promise<RecordReportResult> {
  const { recorded, sentAt } = await store.transaction(async (tx) => {
    let sent: Date | null = null;
    const recorded = await recordReport({ transaction: (fn) => fn(tx) }, report, receivedAt);
    if (recorded.accepted) {
      const [before] = await tx.query<{ report_generation: string | number | null; sent_at: Date | string | null }>(
        `SELECT n.report_generation, d.sent_at FROM nodes n LEFT JOIN declarations d ON d.node = n.name AND d.generation = $2 WHERE n.name = $1`,
        [report.node, report.generation],
      );
      if (before?.sent_at != null && (before.report_generation === null || Number(before.report_generation) !== report.generation)) sent = new Date(before.sent_at);
      await tx.query(
        `UPDATE nodes SET report_generation = $2, report_declaration_digest = $3, report_summary = $4, reported_at = $5
         WHERE name = $1`,
        [report.node, report.generation, report.declaration_digest, JSON.stringify(reportSummary(report)), receivedAt],
      );
    }
    return { recorded, sentAt: sent };
  });
  if (sentAt !== null) durationsOf(store).heard('apply', receivedAt.getTime() - sentAt.getTime(), receivedAt);
  return recorded;
}
