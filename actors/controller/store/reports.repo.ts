import type { Report } from '../../../schema/report';
import type { Sql, SqlStore } from './sql-store';

/** Where a report stands in its node's accounts: epoch, then sequence, then report sequence. */
export interface ReportOrder {
  epoch: number;
  sequence: number;
  report_sequence: number;
}

/** Why a report was not kept; each is counted in `report_refusals`. */
export type ReportRefusal = 'older' | 'duplicate' | 'unknown_node';

/** The outcome of {@link recordReport}. */
export type RecordReportResult =
  | { accepted: true }
  | { accepted: false; reason: 'older' | 'duplicate'; latest: ReportOrder }
  | { accepted: false; reason: 'unknown_node' };

/** One line of the refusal counts shown in status. */
export interface ReportRefusalCount {
  node: string;
  reason: ReportRefusal;
  count: number;
  first_at: Date;
  last_at: Date;
}

/**
 * Keeps a node's report if it is newer than the node's latest, by epoch, then sequence, then
 * report sequence; otherwise counts it as refused (`older`, or `duplicate` for the same three
 * numbers again). A kept report also refreshes the node's record: what it owns (the copy kept
 * for recovery), the version running, and last seen.
 *
 * The node's row is locked first (SELECT … FOR UPDATE), so two reports from one node handled at
 * once are compared one after the other rather than both against the same latest.
 */
export async function recordReport(store: Pick<SqlStore, 'transaction'>, report: Report, receivedAt: Date): Promise<RecordReportResult> {
  return store.transaction(async (tx) => {
    const [node] = await tx.query('SELECT name FROM nodes WHERE name = $1 FOR UPDATE', [report.node]);
    if (node === undefined) {
      await countRefusal(tx, report.node, 'unknown_node', receivedAt);
      return { accepted: false, reason: 'unknown_node' } as const;
    }
    const [latest] = await tx.query<ReportOrder>(
      'SELECT epoch, sequence, report_sequence FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1',
      [report.node],
    );
    if (latest !== undefined) {
      const order = compareOrder(report, latest);
      if (order <= 0) {
        const reason = order === 0 ? 'duplicate' : 'older';
        await countRefusal(tx, report.node, reason, receivedAt);
        return { accepted: false, reason, latest } as const;
      }
    }
    await tx.query(
      `INSERT INTO reports (node, epoch, sequence, report_sequence, declaration_digest, generation, results, refused, briefing,
                            version_running, seconds_since_linked, sent_at, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        report.node, report.epoch, report.sequence, report.report_sequence, report.declaration_digest, report.generation,
        JSON.stringify(report.results), jsonOrNull(report.refused), jsonOrNull(report.briefing),
        report.version_running, report.seconds_since_linked, report.sent_at, receivedAt,
      ],
    );
    await tx.query(
      `UPDATE nodes SET owned = $2, owned_at = $3, version_running = $4, last_seen_at = GREATEST(last_seen_at, $3), updated_at = $3
       WHERE name = $1`,
      [report.node, JSON.stringify(report.owned), receivedAt, report.version_running],
    );
    return { accepted: true } as const;
  });
}

/** The refusal counts, by node then reason. */
export function reportRefusalCounts(sql: Sql): Promise<ReportRefusalCount[]> {
  return sql.query<ReportRefusalCount>('SELECT node, reason, count, first_at, last_at FROM report_refusals ORDER BY node, reason');
}

/** Negative when `a` comes before `b` in a node's accounts, zero when they are the same place. */
export function compareOrder(a: ReportOrder, b: ReportOrder): number {
  return a.epoch - b.epoch || a.sequence - b.sequence || a.report_sequence - b.report_sequence;
}

async function countRefusal(tx: Sql, node: string, reason: ReportRefusal, at: Date): Promise<void> {
  await countRefusalOf(tx, node, reason, at);
}

/**
 * The name refusals are counted under when they came on the subject of no node in the store:
 * not a node name (those are DNS labels), so it can never be taken for one, and one row per
 * reason whatever names were used, so invented names cannot grow the table.
 */
export const UNKNOWN_SENDER = '(unknown sender)';

/**
 * Counts one refused report against `node` when the store has such a node, and against
 * UNKNOWN_SENDER otherwise, so nothing a sender makes up is shown as a node's trouble.
 */
export async function countRefusalOf(sql: Sql, node: string, reason: string, at: Date): Promise<void> {
  await sql.query(
    `INSERT INTO report_refusals (node, reason, count, first_at, last_at)
       SELECT CASE WHEN EXISTS (SELECT 1 FROM nodes WHERE name = $1) THEN $1 ELSE $4 END, $2, 1, $3, $3
     ON CONFLICT (node, reason) DO UPDATE
       SET count = report_refusals.count + 1, last_at = GREATEST(report_refusals.last_at, excluded.last_at)`,
    [node, reason, at, UNKNOWN_SENDER],
  );
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}
