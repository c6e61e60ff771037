import type { DurationSummary } from './summarise-durations';

/** What `mesh-control durations` answers. */
export interface DurationsListing {
  /** The window asked, as given (`24h`). */
  since: string;
  /** The first five-minute window counted, ISO 8601: the window asked, rounded down to one. */
  from: string;
  kinds: DurationSummary[];
}

/** A table for a person: one line a kind. */
export function formatDurations(listing: DurationsListing): string {
  const rows = listing.kinds.map((kind) => [kind.kind, String(kind.count), said(kind.median_ms), said(kind.p90_ms), said(kind.p99_ms)]);
  const header = ['KIND', 'COUNT', 'MEDIAN', 'P90', 'P99'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd();
  return [`durations heard since ${listing.from} (--since ${listing.since}; quantiles within about 5 %)`, line(header), ...rows.map(line)].join('\n');
}

// Three figures at most, in the largest unit under which it is at least 1: a quantile known to
// 5 % says no more than that.
function said(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 600_000) return `${Number((ms / 1000).toPrecision(3))} s`;
  if (ms < 36_000_000) return `${Number((ms / 60_000).toPrecision(3))} min`;
  return `${Number((ms / 3_600_000).toPrecision(3))} h`;
}
