import type { NatsConnection } from '@nats-io/transport-node';
import { SimulatedClock } from 'xstate';
import type { LinkBackoff, LinkTimings } from '../../../../machines/link.machine';
import type { HostIdentity } from '../../../../schema/host-state';
import { generateSigningKeyPair } from '../../../shared/crypto';
import { startFreezeProxy, type FreezeProxy, type ProxiedConnection } from '../../../shared/testing/freeze-proxy';
import type { TestBroker } from '../../../../tests/broker/test-broker';
import { openPinnedLink, type LinkListener, type PinnedLink } from '../pinned-link';

/** What the link told the host, in order. */
export class RecordedListener implements LinkListener {
  readonly notes: string[] = [];
  readonly links: NatsConnection[] = [];
  unlinks = 0;
  linked(connection: NatsConnection): void {
    this.links.push(connection);
  }
  unlinked(): void {
    this.unlinks += 1;
  }
  note(line: string): void {
    this.notes.push(line);
  }
}

/** The link machine's waits in a rig: measured on the simulated clock, never by the wall. */
export const RIG_TIMINGS: LinkTimings = { attemptTimeoutMs: 5_000, livenessTimeoutMs: 2_000, standbyAfterMs: 250, settledAfterMs: 10_000 };
/** The rig's backoff: short, with a cap two steps up. */
export const RIG_BACKOFF: LinkBackoff = { firstMs: 200, capMs: 800 };

/**
 * The real link (openPinnedLink: the link actor with its NATS attempt, watch and check) dialling
 * a real broker through a freeze proxy, its waits on a simulated clock and its jitter nil, so a
 * test knows every delay. The proxy holds every new connection until the test lets it through:
 * an attempt sits at its certificate probe until `letAttemptThrough`, `failAttempt` or a rouse.
 */
export class LinkRig {
  /** The proxied connection of the current link, while there is one. */
  linkedPair: ProxiedConnection | undefined;
  private seen = 0;

  private constructor(
    readonly proxy: FreezeProxy,
    readonly link: PinnedLink,
    readonly clock: SimulatedClock,
    readonly listener: RecordedListener,
  ) {}

  /** A rig whose link has just started its first attempt (held by the proxy). */
  static async start(broker: TestBroker, identity: HostIdentity): Promise<LinkRig> {
    const proxy = await startFreezeProxy({ port: broker.port });
    proxy.admit('hold');
    const clock = new SimulatedClock();
    const listener = new RecordedListener();
    const link = openPinnedLink({
      identity,
      pins: { broker_url: proxy.url, broker_fingerprint: broker.fingerprint, controller_public_key: generateSigningKeyPair().public_key },
      listener,
      backoff: RIG_BACKOFF,
      timings: RIG_TIMINGS,
      // Pings would find a frozen link dead on their own; here only the drivers end a link.
      deadLinkMs: 120_000,
      random: () => 0,
      closeFlushMs: 100,
      clock,
    });
    return new LinkRig(proxy, link, clock, listener);
  }

  /** Connections the host opened since the current link (or since the start), still open on its side. */
  newerOpen(): ProxiedConnection[] {
    const since = this.linkedPair?.id ?? 0;
    return this.proxy.open().filter((pair) => pair.id > since);
  }

  /** Waits for an attempt's probe to be held by the proxy, and returns it. */
  async heldAttempt(): Promise<ProxiedConnection> {
    return until('an attempt held by the proxy', () => this.newerOpen().find((pair) => pair.frozen));
  }

  /** Lets the held attempt (or new connection beside a silent one) through, and waits until it has linked. */
  async letAttemptThrough(): Promise<void> {
    const before = this.listener.links.length;
    const held = this.newerOpen().filter((pair) => pair.frozen);
    this.proxy.admit('forward');
    for (const pair of held) pair.thaw();
    await until('the new link', () => (this.listener.links.length > before ? true : undefined));
    this.proxy.admit('hold');
    this.linkedPair = this.proxy.connections().at(-1);
    this.seen = this.proxy.connections().length;
  }

  /** Makes the held attempt fail: the network closes its connection under it. */
  async failAttempt(): Promise<void> {
    for (const pair of this.newerOpen().filter((p) => p.frozen)) pair.cut();
  }

  /** The link's connection stops carrying anything (a suspended network), its side still open. */
  freezeLink(): void {
    this.linkedPair?.freeze();
  }

  /** The link's connection carries again. */
  thawLink(): void {
    this.linkedPair?.thaw();
  }

  /** Connections accepted since the rig last looked. */
  acceptedSinceLastLook(): ProxiedConnection[] {
    const fresh = this.proxy.connections().slice(this.seen);
    this.seen = this.proxy.connections().length;
    return fresh;
  }

  /** Stops the link (as the host does) and the proxy. */
  async dispose(): Promise<void> {
    await this.link.close();
    await this.proxy.close();
  }
}

/** Polls `look` until it gives a value, for at most `timeoutMs`. */
export async function until<T>(what: string, look: () => T | undefined | Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
