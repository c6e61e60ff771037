import type { Sql } from '../store/sql-store';
import { quantileOfBins } from './duration-bins';
import { DURATION_KINDS, type DurationKind } from './duration-recorder';

/** One kind's durations over a window. Quantiles in ms, within about 4.5 %; null when none was heard. */
export interface DurationSummary {
  kind: DurationKind;
  count: number;
  median_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
}

/**
 * Count, median, p90 and p99 of each kind (or only `kind`) over the windows starting at or
 * after `from`: every kind asked is listed, a kind with nothing heard with count 0.
 */
export async function summariseDurations(sql: Sql, from: Date, kind?: DurationKind): Promise<DurationSummary[]> {
  const rows = await sql.query<{ kind: string; bin: number; count: string | number }>(
    `SELECT kind, bin, sum(count) AS count FROM duration_counts
     WHERE window_start >= $1 AND ($2::text IS NULL OR kind = $2)
     GROUP BY kind, bin`,
    [from, kind ?? null],
  );
  return (kind === undefined ? DURATION_KINDS : [kind]).map((each) => {
    const counts = rows.filter((row) => row.kind === each).map((row) => ({ bin: Number(row.bin), count: Number(row.count) }));
    const round = (value: number | null): number | null => (value === null ? null : Math.round(value));
    return {
      kind: each,
      count: counts.reduce((sum, entry) => sum + entry.count, 0),
      median_ms: round(quantileOfBins(counts, 0.5)),
      p90_ms: round(quantileOfBins(counts, 0.9)),
      p99_ms: round(quantileOfBins(counts, 0.99)),
    };
  });
}
