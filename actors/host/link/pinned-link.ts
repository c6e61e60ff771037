import { setTimeout as sleep } from 'node:timers/promises';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { connectPinned } from '../../shared/bus/connect-pinned';
import { nodeInboxPrefix } from '../../shared/bus/subjects';
import { nkeySeedOf } from '../../shared/crypto/nkey';
import { DEFAULT_RETRY, retryDelay, type RetryPolicy } from './retry-delay';

/** What the link tells the host about its connection. */
export interface LinkListener {
  /** A connection works: a new one, or the same one after the client reconnected it. */
  linked(connection: NatsConnection, again: boolean): void;
  /** The connection stopped working (the client is reconnecting, or it closed). */
  unlinked(): void;
  /** Something a person reading the host's log should see; never carries key material. */
  note(line: string): void;
}

/** Where and as whom the link connects. */
export interface PinnedLinkOptions {
  identity: HostIdentity;
  pins: HostPins;
  listener: LinkListener;
  retry?: RetryPolicy;
  /** How long one connection attempt may take. */
  timeoutMs?: number;
}

/** The host's running connection to the broker. */
export interface PinnedLink {
  /** The connection when there is one (it may be reconnecting). */
  current(): NatsConnection | null;
  /** Stops trying, drains the connection (sending what is queued) and waits for it to close. */
  close(): Promise<void>;
}

/**
 * Keeps the host connected to its broker as its own nkey user, for as long as it runs: every
 * connection is pinned (the certificate is checked before anything is sent, reconnections
 * included), replies and pulls use the node's own inbox prefix (the only one it may read), and
 * a connection that cannot be made or that closes for good is tried again after a growing,
 * jittered wait. While a connection is up, the NATS client's own reconnection keeps it.
 *
 * The host only dials out: nothing here listens.
 */
export function openPinnedLink(options: PinnedLinkOptions): PinnedLink {
  const stop = new AbortController();
  let connection: NatsConnection | null = null;
  const done = keepConnected(options, stop.signal, (next) => {
    connection = next;
  });
  return {
    current: () => connection,
    close: async () => {
      stop.abort();
      const open = connection;
      if (open !== null && !open.isClosed()) await open.drain().catch(() => open.close());
      await done;
    },
  };
}

async function keepConnected(options: PinnedLinkOptions, signal: AbortSignal, publish: (connection: NatsConnection | null) => void): Promise<void> {
  const { identity, pins, listener } = options;
  let failures = 0;
  let lastProblem = '';
  while (!signal.aborted) {
    let connection: NatsConnection;
    try {
      connection = await connectPinned(pins.broker_url, pins.broker_fingerprint, {
        authenticator: nkeyAuthenticator(nkeySeedOf(identity.secret_key)),
        inboxPrefix: nodeInboxPrefix(identity.node),
        name: `nox-mesh-host ${identity.node}`,
        reconnect: true,
        maxReconnectAttempts: -1,
        ignoreClusterUpdates: true,
        timeout: options.timeoutMs ?? 10_000,
      }, { signal });
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      const wait = retryDelay(failures, options.retry);
      const problem = error instanceof Error ? error.message : String(error);
      // Said when it changes, not on every attempt: a host away for a week would fill its log.
      if (problem !== lastProblem) listener.note(`cannot reach the broker: ${problem}; trying again, waiting up to ${Math.round((options.retry ?? DEFAULT_RETRY).capMs / 1000)} s between attempts`);
      lastProblem = problem;
      await sleep(wait, undefined, { signal }).catch(() => undefined);
      continue;
    }
    if (signal.aborted) {
      await connection.close();
      return;
    }
    failures = 0;
    lastProblem = '';
    publish(connection);
    listener.note(`linked to ${pins.broker_url} as node ${identity.node}`);
    listener.linked(connection, false);
    const watching = watchStatus(connection, listener);
    const closed = await connection.closed();
    await watching;
    publish(null);
    listener.unlinked();
    if (signal.aborted) return;
    listener.note(`the connection to the broker closed${closed instanceof Error ? `: ${closed.message}` : ''}; connecting again`);
    failures += 1;
    await sleep(retryDelay(failures, options.retry), undefined, { signal }).catch(() => undefined);
  }
}

async function watchStatus(connection: NatsConnection, listener: LinkListener): Promise<void> {
  for await (const status of connection.status()) {
    if (status.type === 'disconnect') {
      listener.note('lost the broker; the client is reconnecting');
      listener.unlinked();
    } else if (status.type === 'reconnect') {
      listener.note('reached the broker again');
      listener.linked(connection, true);
    }
  }
}
