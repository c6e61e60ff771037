import { binOf, quantileOfBins, valueOfBin } from './duration-bins';

function binned(values: readonly number[]): Array<{ bin: number; count: number }> {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(binOf(value), (counts.get(binOf(value)) ?? 0) + 1);
  return [...counts].map(([bin, count]) => ({ bin, count }));
}

describe('durations counted in logarithmic bins', () => {
  test('a value is said within 4.5 % by its bin, from a millisecond to a month', () => {
    for (const ms of [1, 1.5, 7, 59_999, 60_000, 61_234, 3_600_000, 30 * 86_400_000]) {
      const said = valueOfBin(binOf(ms));
      expect(Math.abs(said - ms) / ms).toBeLessThan(0.045);
    }
  });

  test('under a millisecond, zero, and what is not a number all fall in bin 0, said as 0', () => {
    for (const ms of [0, 0.4, -5, Number.NaN]) expect(binOf(ms)).toBe(0);
    expect(valueOfBin(0)).toBe(0);
  });

  test('median, p90 and p99 of 1..1000 ms come out near 500, 900 and 990', () => {
    const values = Array.from({ length: 1000 }, (_, index) => index + 1);
    const counts = binned(values);
    for (const [q, exact] of [[0.5, 500], [0.9, 900], [0.99, 990]] as const) {
      const said = quantileOfBins(counts, q) as number;
      expect(Math.abs(said - exact) / exact).toBeLessThan(0.045);
    }
  });

  test('a rare slow one shows in p99 but not in the median', () => {
    const values = [...Array.from({ length: 98 }, () => 60_000), 600_000, 600_000];
    const counts = binned(values);
    expect(Math.abs((quantileOfBins(counts, 0.5) as number) - 60_000)).toBeLessThan(60_000 * 0.045);
    expect(Math.abs((quantileOfBins(counts, 0.99) as number) - 600_000)).toBeLessThan(600_000 * 0.045);
  });

  test('nothing counted has no quantile', () => {
    expect(quantileOfBins([], 0.5)).toBeNull();
    expect(quantileOfBins([{ bin: 3, count: 0 }], 0.9)).toBeNull();
  });
});
