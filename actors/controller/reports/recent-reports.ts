import * as z from 'zod';
import type { Sql } from '../store/sql-store';

/** How many reports `reports.recent` answers unless asked for fewer, and at most. */
export const RECENT_REPORTS_MAX = 50;

/** The arguments of `reports.recent`. */
export const RecentReportsArgs = z.strictObject({ limit: z.number().int().min(1).max(RECENT_REPORTS_MAX).optional() });

/** One kept report in brief, as the dashboard lists it. */
export interface RecentReport {
  node: string;
  generation: number;
  epoch: number;
  /** When the controller received it, ISO-8601. */
  received_at: string;
  version_running: string;
  /** Resources by outcome (`applied`, `unchanged`, `failed`, …), by name. */
  outcomes: Record<string, number>;
  /** Why the host refused the declaration whole, when it did. */
  refused: string | null;
}

interface RecentRow {
  node: string;
  generation: number | string;
  epoch: number | string;
  received_at: Date | string;
  version_running: string;
  outcomes: Record<string, number | string> | null;
  refused: string | null;
}

/**
 * The latest reports kept, newest first, with each one's results counted by outcome in the
 * store (a report's results can be long; only the counts cross the bus). Reads the index on
 * received_at (migration 0057), so it costs the same on a fleet of thousands.
 */
export async function recentReports(sql: Sql, limit = 20): Promise<RecentReport[]> {
  const rows = await sql.query<RecentRow>(
    `SELECT node, generation, epoch, received_at, version_running, refused->>'reason' AS refused,
            (SELECT jsonb_object_agg(outcome, n) FROM (
               SELECT result->>'outcome' AS outcome, count(*) AS n FROM jsonb_array_elements(results) AS result GROUP BY 1
             ) AS counted) AS outcomes
       FROM reports
     ORDER BY received_at DESC
     LIMIT $1::bigint`,
    [limit],
  );
  return rows.map((row) => ({
    node: row.node,
    generation: Number(row.generation),
    epoch: Number(row.epoch),
    received_at: new Date(row.received_at).toISOString(),
    version_running: row.version_running,
    // By name, so the same report reads the same way every time (the store's aggregate keeps no order).
    outcomes: Object.fromEntries(Object.entries(row.outcomes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([outcome, n]) => [outcome, Number(n)])),
    refused: row.refused,
  }));
}

/** The text of `reports.recent`: one line a report. */
export function formatRecentReports(reports: readonly RecentReport[]): string {
  if (reports.length === 0) return 'no reports kept yet';
  return reports
    .map((report) => {
      const counts = Object.entries(report.outcomes).map(([outcome, n]) => `${n} ${outcome}`).join(', ') || 'no resources';
      return `${report.received_at}  ${report.node}  generation ${report.generation}: ${report.refused === null ? counts : `refused: ${report.refused}`}`;
    })
    .join('\n');
}
