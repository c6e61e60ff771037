import type { NatsConnection } from '@nats-io/transport-node';
import { createActor, type ActorOptions, type AnyActorLogic, type SnapshotFrom } from 'xstate';
import { DEFAULT_LINK_BACKOFF, ROUSED_WHILE_CONNECTING, type LinkBackoff, type LinkTimings } from '../../../machines/link.machine';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { checkConnection } from './check-connection';
import { DEFAULT_DEAD_LINK_MS } from './dead-link-pings';
import { linkLogic } from './link.actor';
import { pinnedAttempt } from './pinned-attempt';
import { watchConnection } from './watch-connection';
import { monotonicMs } from '../../shared/time/monotonic-ms';
import { BrokerRefusedCredentials, FingerprintMismatch } from '../../shared/bus/bus-errors';

/** What the link tells the host about its connection. */
export interface LinkListener {
  /** A connection works: the first, or a new one after the last ended or stopped answering. */
  linked(connection: NatsConnection, again: boolean): void;
  /** The connection stopped working and is being closed. */
  unlinked(): void;
  /** An attempt to reach the broker failed, and the link waits before the next. */
  unreachable?(): void;
  /** The broker refused this node's credentials (its user is gone, or its key is not the one it knows). */
  refused?(): void;
  /**
   * The broker presented a certificate this node does not pin: nothing was sent to it. The
   * mesh rotated its certificate while the node was away, or something intercepts the link.
   */
  unpinned?(mismatch: FingerprintMismatch): void;
  /** Something a person reading the host's log should see; never carries key material. */
  note(line: string): void;
}

/** Where and as whom the link connects, and how patiently. */
export interface PinnedLinkOptions {
  identity: HostIdentity;
  /** The pins, or how to read them at each attempt (a declaration may pin a next certificate). */
  pins: HostPins | (() => HostPins);
  listener: LinkListener;
  backoff?: Partial<LinkBackoff>;
  timings?: Partial<LinkTimings>;
  /** How long a connection may go without answering its pings before it is closed (default 30 s). */
  deadLinkMs?: number;
  /** Jitter in [0, 1) for the retry delay (Math.random unless given). */
  random?: () => number;
  /** The clock the link's waits are measured on (tests pass xstate's SimulatedClock). */
  clock?: ActorOptions<AnyActorLogic>['clock'];
  /** How long `close` waits for queued messages to reach a broker that may not be answering (default 2 s). */
  closeFlushMs?: number;
}

/** Where the link is, in a word: what `nox-mesh-host` says and tests look at. */
export type LinkPhase = 'connecting' | 'backing-off' | 'linked' | 'verifying' | 'stopped';

/** Where the link is, and what its backoff stands at. */
export interface LinkStatus {
  phase: LinkPhase;
  /** The link machine's state, as XState gives it (`connecting`, `{ linked: 'steady' }`, …). */
  state: unknown;
  /** Failures counted towards the next retry delay. */
  failures: number;
  /** Why the last attempt failed or the last link ended; null before anything went wrong. */
  lastProblem: string | null;
}

/** The host's running link to the broker. */
export interface PinnedLink {
  /** The linked connection, or null while there is none. */
  current(): NatsConnection | null;
  /** Where the link is. */
  phase(): LinkPhase;
  /** Where the link is, in more detail. */
  status(): LinkStatus;
  /**
   * The machine woke or its network changed (SIGUSR1): ends an attempt under way, or checks a
   * linked connection; does nothing to a backoff wait. Returns what it did, for the log.
   */
  rouse(): string;
  /** Sends what is queued on the connection (for a moment at most), then stops and closes it. */
  close(): Promise<void>;
}

// A broker that does not answer a flush in this long is not going to receive what is queued.
const FLUSH_ON_CLOSE_MS = 2000;

/**
 * Keeps the host linked to its broker as its own nkey user for as long as it runs, with the
 * link machine (machines/link.machine.ts) deciding when to try: every connection is pinned (the
 * certificate is checked before anything is sent), a failed attempt is retried after a
 * growing, jittered wait, a connection that stops answering its pings is closed within
 * `deadLinkMs`, and a rouse ends what may be stuck. The NATS client's own reconnection is off,
 * so every link is a new connection and the listener hears of each.
 *
 * The host only dials out: nothing here listens.
 */
export function openPinnedLink(options: PinnedLinkOptions): PinnedLink {
  const { identity, listener } = options;
  const pinsNow = typeof options.pins === 'function' ? options.pins : ((pins: HostPins) => () => pins)(options.pins);
  const deadLinkMs = options.deadLinkMs ?? DEFAULT_DEAD_LINK_MS;
  let current: NatsConnection | null = null;
  let everLinked = false;
  let lastNoted: string | null = null;
  const capMs = options.backoff?.capMs ?? DEFAULT_LINK_BACKOFF.capMs;

  const attempt = pinnedAttempt({ identity, pins: pinsNow, deadLinkMs });
  const logic = linkLogic<NatsConnection>({
    attempt: (input, signal) => attempt(input, signal).catch((error: unknown) => {
      if (error instanceof BrokerRefusedCredentials) listener.refused?.();
      if (error instanceof FingerprintMismatch) listener.unpinned?.(error);
      throw error;
    }),
    watch: watchConnection,
    check: async (connection, signal) => {
      const started = monotonicMs();
      await checkConnection(connection, signal);
      if (!signal.aborted) listener.note(`the link answered in ${Math.round(monotonicMs() - started)} ms; it stays`);
    },
    ...(options.random === undefined ? {} : { random: options.random }),
    linked: (connection, replacing) => {
      if (replacing) listener.note('the link did not answer the rouse, and a new connection was made beside it; the old one is closed');
      current = connection;
      lastNoted = null;
      listener.note(`linked to ${serverOf(connection) ?? pinsNow().broker_url} as node ${identity.node}`);
      listener.linked(connection, everLinked);
      everLinked = true;
    },
    unlinked: (_connection, end) => {
      current = null;
      listener.unlinked();
      if (end.kind === 'ended') {
        listener.note(`the connection to the broker closed: ${end.why}; connecting again`);
        lastNoted = end.why;
      } else if (end.kind === 'silent') {
        listener.note(`${end.why}; connecting again`);
        lastNoted = end.why;
      }
    },
    waiting: (delayMs, problem) => {
      listener.unreachable?.();
      // Said when it changes, not at every attempt: a host away for a week would fill its log.
      if (problem === null || problem === lastNoted) return;
      lastNoted = problem;
      if (problem === ROUSED_WHILE_CONNECTING) {
        listener.note(`the attempt under way was ended by a rouse; trying again in ${delayMs} ms`);
        return;
      }
      listener.note(`cannot reach the broker: ${problem}; trying again in ${delayMs} ms, and then waiting longer each time, up to ${Math.round(capMs / 1000)} s`);
    },
  });
  const actor = createActor(logic, {
    input: {
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.timings === undefined ? {} : { timings: options.timings }),
    },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const snapshot = (): SnapshotFrom<typeof logic> => actor.getSnapshot();
  actor.start();

  const phase = (): LinkPhase => {
    const now = snapshot();
    if (now.status !== 'active') return 'stopped';
    if (now.matches('connecting')) return 'connecting';
    if (now.matches('backingOff')) return 'backing-off';
    if (now.matches({ linked: 'verifying' })) return 'verifying';
    return 'linked';
  };

  return {
    current: () => current,
    phase,
    status: () => {
      const now = snapshot();
      return { phase: phase(), state: now.value, failures: now.context.failures, lastProblem: now.context.lastProblem };
    },
    rouse: () => {
      const before = phase();
      actor.send({ type: 'operator.rouse' });
      switch (before) {
        case 'connecting': return 'ended the attempt under way; the next one follows the backoff, which a rouse does not reset';
        case 'backing-off': return 'waiting out the backoff, which a rouse does not shorten';
        case 'linked': return 'checking that the link still answers';
        case 'verifying': return 'already checking the link; taken as the same rouse';
        case 'stopped': return 'the link is stopping';
      }
    },
    close: async () => {
      const open = current;
      if (open !== null && !open.isClosed()) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          open.flush().catch(() => undefined),
          new Promise<void>((resolve) => { timer = setTimeout(resolve, options.closeFlushMs ?? FLUSH_ON_CLOSE_MS); }),
        ]);
        clearTimeout(timer);
      }
      actor.send({ type: 'host.stopping' });
      if (open !== null) await open.closed();
      actor.stop();
    },
  };
}

// The server a connection is on, as `tls://HOST:PORT`, when the client says.
function serverOf(connection: NatsConnection): string | undefined {
  const server = (connection as { getServer?: () => string }).getServer?.();
  return typeof server === 'string' && server !== '' ? `tls://${server.replace(/^[a-z]+:\/\//, '')}` : undefined;
}
