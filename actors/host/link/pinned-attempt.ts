import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { AttemptInput } from '../../../machines/link.machine';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { connectPinned } from '../../shared/bus/connect-pinned';
import { nodeInboxPrefix } from '../../shared/bus/subjects';
import { nkeySeedOf } from '../../shared/crypto/nkey';
import { deadLinkPings } from './dead-link-pings';

/** Who connects, where, and how soon a silent connection counts as dead. */
export interface PinnedAttemptOptions {
  identity: HostIdentity;
  /** Read at each attempt: a signed declaration may have pinned the broker's next certificate. */
  pins: HostPins | (() => HostPins);
  /** A connection whose pings go unanswered this long is closed (see deadLinkPings). */
  deadLinkMs: number;
}

/**
 * Which server of a cluster a node links to first: the one its name falls on (FNV-1a of the
 * name, modulo the servers), so a fleet spreads over the servers instead of every host linking
 * to the first one listed and loading that server and its routes alone.
 */
export function startingServer(node: string, servers: readonly string[]): string {
  if (servers.length === 0) throw new TypeError('startingServer needs at least one server');
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(node)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return servers[hash % servers.length] as string;
}

/**
 * Which server of a cluster the next attempt dials: first the one the node's name falls on
 * (startingServer), then the same one while it works, the next in the list once an attempt on
 * it failed or its connection ended. One attempt dials one server, so failing over between
 * servers keeps the link machine's backoff and rouse rules: each failure counts, a rouse ends
 * the attempt on the server that does not answer, and the following attempt goes to the next
 * server.
 */
export function serverRotation(node: string): { pick(pins: HostPins): string; passOver(url: string): void } {
  let current: string | undefined;
  let list: readonly string[] = [];
  return {
    pick: (pins) => {
      list = pins.broker_urls ?? [pins.broker_url];
      if (current === undefined || !list.includes(current)) current = startingServer(node, list);
      return current;
    },
    passOver: (url) => {
      if (current !== url || list.length < 2) return;
      current = list[(list.indexOf(url) + 1) % list.length];
    },
  };
}

/**
 * One attempt to link, for the link machine's `attempt`: the broker's certificate is probed and
 * compared with the pins (the current certificate, and the next during a rotation) before
 * anything is sent, then the node connects as its own nkey user
 * with its own inbox prefix. On a cluster each attempt dials one server (serverRotation). The client's reconnection is off — the link machine decides when
 * to try again — and its pings are set so a dead connection is found within `deadLinkMs`.
 *
 * Aborting `signal` calls off the probe at once; a connection that the NATS handshake completes
 * after that is closed as soon as it exists, and so is one made just before the machine let go.
 */
export function pinnedAttempt(options: PinnedAttemptOptions): (input: AttemptInput, signal: AbortSignal) => Promise<NatsConnection> {
  const { identity } = options;
  const servers = serverRotation(identity.node);
  return async (input, signal) => {
    const pins = typeof options.pins === 'function' ? options.pins() : options.pins;
    const fingerprints = [pins.broker_fingerprint, ...(pins.next_broker_fingerprint === undefined ? [] : [pins.next_broker_fingerprint])];
    const url = servers.pick(pins);
    const connection = await connectPinned(url, fingerprints, {
      authenticator: nkeyAuthenticator(nkeySeedOf(identity.secret_key)),
      inboxPrefix: nodeInboxPrefix(identity.node),
      name: `nox-mesh-host ${identity.node}`,
      reconnect: false,
      ignoreClusterUpdates: true,
      // The host says what failed by its message; the client's stack of where each request was
      // made would cost two errors built, and never thrown, for every acknowledgement it sends.
      noAsyncTraces: true,
      timeout: input.timeoutMs,
      ...deadLinkPings(options.deadLinkMs),
    }, { signal }).catch((error: unknown) => {
      servers.passOver(url);
      throw error;
    });
    // The next attempt after this connection ends goes to another server: the one it was on
    // most likely stopped.
    void connection.closed().then(() => servers.passOver(url));
    // The link machine drops the result of an attempt it has stopped: the connection is
    // closed here, whether the stop came during the handshake or just after it.
    const abandon = (): void => { void connection.close().catch(() => undefined); };
    if (signal.aborted) {
      abandon();
      throw new Error('the attempt was called off');
    }
    signal.addEventListener('abort', abandon, { once: true });
    return connection;
  };
}
