import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { ClosedConnectionError, ConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';

// PostgreSQL classes that say the connection or the server failed, not the statement:
// 08 connection exception, 57P admin shutdown / crash / cannot connect now, 53 out of resources.
const STORE_CLASSES = ['08', '57P', '53'];
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/**
 * True when a send failed because the broker or the store did not answer or went away for a
 * while (a server killed, a cluster electing a leader, a connection cut), so the same send
 * tried again after a wait may well go through. False for what waiting does not change: a
 * declaration refused as composed, the lease lost, a node that cannot take it.
 */
export function isPassingSendFailure(error: unknown): boolean {
  if (error instanceof TimeoutError || error instanceof RequestError || error instanceof NoRespondersError) return true;
  if (error instanceof ClosedConnectionError || error instanceof ConnectionError) return true;
  // The JetStream API's own answers (no leader yet, insufficient resources while a server is
  // down) and its client's (jetstream is not enabled: no server answered for it).
  if (error instanceof JetStreamApiError || error instanceof JetStreamError) return true;
  if (error instanceof Error && error.name === 'JetStreamNotEnabled') return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || STORE_CLASSES.some((prefix) => code.startsWith(prefix)))) return true;
  // node-postgres's own words for a pool that could not hand out a connection, or lost it.
  return error instanceof Error && /timeout exceeded when trying to connect|Connection terminated/i.test(error.message);
}
