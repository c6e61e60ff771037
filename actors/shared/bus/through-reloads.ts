import { BrokerRefusedCredentials, BrokerUnreachable } from './bus-errors';
import { HANDSHAKE_TIMED_OUT } from './connect-pinned';
import { describeSocketError } from './socket-error';

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
 * How many times a connection that was reset, or whose NATS handshake timed out, is tried again.
 * A server busy reloading (a cluster's three, at each token) does both now and then; a broker
 * that is down refuses the connection instead and is said at once. Each try may take the
 * handshake's whole timeout, so a broker that hangs is said after a few of them, not a dozen.
 */
export const STALLED_HANDSHAKE_RETRIES = 2;

/** Reasons of BrokerUnreachable that a reload causes now and then (see STALLED_HANDSHAKE_RETRIES). */
const STALLED = new Set([HANDSHAKE_TIMED_OUT, describeSocketError({ code: 'ECONNRESET' })]);

/**
 * Connects with `connectOnce`, asking again after each of `waits` while the broker refuses the
 * credentials (BrokerRefusedCredentials) or, up to STALLED_HANDSHAKE_RETRIES times, resets the
 * connection or lets the handshake time out; any other failure, and the last one, is thrown.
 */
export async function connectThroughReloads<T>(
  connectOnce: () => Promise<T>,
  waits: readonly number[] = RELOAD_RETRY_WAITS_MS,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  let stalls = 0;
  for (const wait of waits) {
    try {
      return await connectOnce();
    } catch (error) {
      const stalled = error instanceof BrokerUnreachable && STALLED.has(error.reason);
      if (stalled) stalls += 1;
      if (!(error instanceof BrokerRefusedCredentials || (stalled && stalls <= STALLED_HANDSHAKE_RETRIES))) throw error;
    }
    await sleep(wait);
  }
  return connectOnce();
}
