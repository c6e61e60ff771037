/**
 * Milliseconds on a monotonic clock (not the time of day: for durations and deadlines), with
 * sub-millisecond precision, as `performance.now()` gives them but from an arbitrary origin.
 * The global `performance` loads Node's perf_hooks and the eight modules behind it (user
 * timing, resource timing, histograms) on first use, about 0.3 MB that a running host would
 * hold for nothing; `process.hrtime` is the clock underneath them.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1000 + nanoseconds / 1e6;
}
