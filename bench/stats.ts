import os from 'node:os';

/** A figure from repeated runs: the middle value, the 99th percentile, how many, on how many cores. */
export interface Summary {
  median: number;
  p99: number;
  /** The fastest and the slowest run, so a reader sees the spread behind the two figures. */
  min: number;
  max: number;
  runs: number;
  /** `os.cpus().length` of the machine that ran them. */
  cores: number;
}

/** The middle of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = sortedCopy(values);
  const middle = sorted.length / 2;
  if (sorted.length % 2 === 1) return sorted[Math.floor(middle)] as number;
  return ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * The `q`-th percentile by nearest rank: the smallest value at or above which `q` per cent of
 * the values lie, always one of the values themselves. With fewer than 100 values the 99th is
 * the largest, which is what a reader of a small sample should be shown.
 */
export function percentile(values: readonly number[], q: number): number {
  if (!(q > 0 && q <= 100)) throw new RangeError(`a percentile is above 0 and at most 100, got ${q}`);
  const sorted = sortedCopy(values);
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[rank - 1] as number;
}

/** The 99th percentile, by nearest rank (see {@link percentile}). */
export function p99(values: readonly number[]): number {
  return percentile(values, 99);
}

/** Median, p99, spread and run count of `values`, with this machine's core count. */
export function summarise(values: readonly number[]): Summary {
  const sorted = sortedCopy(values);
  return {
    median: median(sorted),
    p99: p99(sorted),
    // From the sorted copy, not Math.min(...values): a heartbeat load yields hundreds of
    // thousands of values, more arguments than a call may take.
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
    runs: values.length,
    cores: os.cpus().length,
  };
}

function sortedCopy(values: readonly number[]): number[] {
  if (values.length === 0) throw new RangeError('no values: a figure needs at least one run');
  if (values.some((value) => !Number.isFinite(value))) throw new RangeError(`every value must be a finite number, got ${values.join(', ')}`);
  return [...values].sort((a, b) => a - b);
}
