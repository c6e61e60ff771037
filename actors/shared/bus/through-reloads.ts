import { BrokerRefusedCredentials } from './bus-errors';

/**
 * The waits before asking again after the broker refused our credentials. nats-server 2.9
 * refuses a client that connects while it reloads its user list (its INFO then carries no nonce
 * to sign), and a mesh reloads every server at each token and enrolment: twenty tokens issued at
 * once keep each server of a cluster reloading for a few seconds, longer than one wait. About
 * 4 s in all, so a refusal that stands (a wrong key, a used token) is still said well inside a
 * CLI's wait.
 */
export const RELOAD_RETRY_WAITS_MS: readonly number[] = [250, 750, 1_000, 2_000];

/**
 * Connects with `connectOnce`, asking again after each of `waits` while the broker refuses the
 * credentials (BrokerRefusedCredentials); any other failure, and the last refusal, is thrown.
 */
export async function connectThroughReloads<T>(
  connectOnce: () => Promise<T>,
  waits: readonly number[] = RELOAD_RETRY_WAITS_MS,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  for (const wait of waits) {
    try {
      return await connectOnce();
    } catch (error) {
      if (!(error instanceof BrokerRefusedCredentials)) throw error;
    }
    await sleep(wait);
  }
  return connectOnce();
}
