import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The link machine's `check`, after a rouse: one PING, resolving when its PONG comes back.
 * A connection that closes meanwhile is not an answer, and not this check's to report (the
 * watch does): the check then waits, unresolved, until the machine lets it go. The machine
 * bounds the wait with its liveness timeout.
 */
export async function checkConnection(connection: Pick<NatsConnection, 'flush'>, signal: AbortSignal): Promise<void> {
  try {
    await connection.flush();
  } catch {
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
}
