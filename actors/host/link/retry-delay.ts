import { backoffCeiling, DEFAULT_LINK_BACKOFF } from '../../../machines/link.machine';

/** How a loop waits between attempts to reach the broker. */
export interface RetryPolicy {
  /** The wait after the first failure. */
  firstMs: number;
  /** The longest wait, however many attempts have failed. */
  capMs: number;
}

/** The link's backoff (see machines/link.machine.ts): 200 ms, doubling, at most a minute. */
export const DEFAULT_RETRY: RetryPolicy = DEFAULT_LINK_BACKOFF;

/**
 * The wait before attempt `failures + 1`: exponential with a cap (the link machine's
 * backoffCeiling), then jittered down by up to half so a fleet that lost its broker together
 * does not come back in step. `random` is in [0, 1), given by tests.
 */
export function retryDelay(failures: number, policy: RetryPolicy = DEFAULT_RETRY, random: () => number = Math.random): number {
  return Math.round(backoffCeiling(failures, policy) * (1 - random() / 2));
}
