import { monotonicMs } from './monotonic-ms';

describe('monotonicMs', () => {
  it('never goes back, and measures an interval as performance.now does', async () => {
    // Bracketed by performance.now on both sides rather than compared within a tolerance: the
    // two read one clock, so the inner interval is never longer than the outer one, however
    // loaded the machine (and a timer never fires early).
    const outerStart = performance.now();
    const first = monotonicMs();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = monotonicMs();
    const outer = performance.now() - outerStart;
    expect(second).toBeGreaterThanOrEqual(first);
    expect(second - first).toBeGreaterThanOrEqual(45);
    expect(second - first).toBeLessThanOrEqual(outer + 0.001);
  });

  it('has sub-millisecond precision', () => {
    const readings = Array.from({ length: 200 }, () => monotonicMs());
    expect(readings.some((value) => !Number.isInteger(value))).toBe(true);
    for (let i = 1; i < readings.length; i += 1) expect(readings[i]).toBeGreaterThanOrEqual(readings[i - 1] as number);
  });
});
