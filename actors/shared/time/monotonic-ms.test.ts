import { monotonicMs } from './monotonic-ms';

describe('monotonicMs', () => {
  it('never goes back, and measures an interval as performance.now does', async () => {
    const first = monotonicMs();
    const referenceStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = monotonicMs();
    const reference = performance.now() - referenceStart;
    expect(second).toBeGreaterThanOrEqual(first);
    expect(second - first).toBeGreaterThanOrEqual(45);
    expect(Math.abs(second - first - reference)).toBeLessThan(5);
  });

  it('has sub-millisecond precision', () => {
    const readings = Array.from({ length: 200 }, () => monotonicMs());
    expect(readings.some((value) => !Number.isInteger(value))).toBe(true);
    for (let i = 1; i < readings.length; i += 1) expect(readings[i]).toBeGreaterThanOrEqual(readings[i - 1] as number);
  });
});
