/**
 * Bins per doubling. A bin spans a factor of 2^(1/8), so a value said as its bin's geometric
 * middle is within 2^(1/16) - 1, about 4.5 %, of the value measured.
 */
export const BINS_PER_DOUBLING = 8;

/** The highest bin: about 2^50 ms, longer than anything measured (the store's check allows 400). */
export const MAX_BIN = 400;

/** The bin a duration of `ms` falls in: 0 under 1 ms, else 1 + floor(8·log2(ms)). */
export function binOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(MAX_BIN, 1 + Math.floor(BINS_PER_DOUBLING * Math.log2(ms)));
}

/** The value a bin stands for: its geometric middle in ms (0 for bin 0). */
export function valueOfBin(bin: number): number {
  if (bin <= 0) return 0;
  return 2 ** ((bin - 0.5) / BINS_PER_DOUBLING);
}

/**
 * The `q` quantile (0 < q <= 1) of counted bins, by nearest rank: the value of the bin holding
 * the ceil(q·n)-th smallest measurement. Null when nothing was counted.
 */
export function quantileOfBins(counts: ReadonlyArray<{ bin: number; count: number }>, q: number): number | null {
  const sorted = [...counts].filter((entry) => entry.count > 0).sort((a, b) => a.bin - b.bin);
  const total = sorted.reduce((sum, entry) => sum + entry.count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const entry of sorted) {
    seen += entry.count;
    if (seen >= rank) return valueOfBin(entry.bin);
  }
  return valueOfBin((sorted.at(-1) as { bin: number }).bin);
}
