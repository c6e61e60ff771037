import os from 'node:os';
import { median, p99, percentile, summarise } from './stats';

describe('stats', () => {
  test('the median of an odd count is the middle value, of an even count the mean of the two middle ones', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  test('p99 by nearest rank is the largest value below a hundred runs and the 99th of a hundred', () => {
    expect(p99([3, 9, 1, 4])).toBe(9);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(p99(hundred)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
  });

  test('a summary carries the run count, the spread and the machine\'s cores', () => {
    expect(summarise([30, 10, 20])).toEqual({ median: 20, p99: 30, min: 10, max: 30, runs: 3, cores: os.cpus().length });
  });

  test('summarises a sample of hundreds of thousands of values, as a heartbeat load of 10,000 nodes yields', () => {
    const many = Array.from({ length: 300_000 }, (_, i) => i % 1000);
    expect(summarise(many)).toMatchObject({ median: 499.5, p99: 989, min: 0, max: 999, runs: 300_000 });
  });

  test('refuses an empty sample and a value that is not a number, rather than printing NaN', () => {
    expect(() => median([])).toThrow(/at least one run/);
    expect(() => p99([1, Number.NaN])).toThrow(/finite/);
    expect(() => percentile([1], 0)).toThrow(/above 0/);
  });
});
