/** How the link waits between attempts to reach the broker. */
export interface RetryPolicy {
  /** The wait after the first failure. */
  firstMs: number;
  /** The longest wait, however many attempts have failed. */
  capMs: number;
}

/** One second, doubling, at most five minutes: a laptop on a train neither hammers nor sleeps long. */
export const DEFAULT_RETRY: RetryPolicy = { firstMs: 1000, capMs: 5 * 60 * 1000 };

/**
 * The wait before attempt `failures + 1`: exponential with a cap, then jittered down by up to
 * half so a fleet that lost its broker together does not come back in step. `random` is in
 * [0, 1), given by tests.
 */
export function retryDelay(failures: number, policy: RetryPolicy = DEFAULT_RETRY, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(policy.capMs, policy.firstMs * 2 ** exponent);
  return Math.round(ceiling * (1 - random() / 2));
}
