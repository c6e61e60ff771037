import net from 'node:net';

/** What the proxy does with a connection it accepts. */
export type AdmitMode =
  /** Connect it to the target and forward both ways. */
  | 'forward'
  /** Connect it to the target, and hold it frozen from the start: a network that takes packets and delivers none. */
  | 'hold'
  /** Reset it at once (the client sees ECONNRESET): a network or broker that refuses. */
  | 'refuse';

/** One connection through the proxy: the client's socket and the proxy's own to the target. */
export interface ProxiedConnection {
  /** 1 for the first connection accepted, then counting up. */
  readonly id: number;
  /** `performance.now()` when it was accepted. */
  readonly acceptedAt: number;
  /** Forwarding nothing either way, both sockets held open. */
  readonly frozen: boolean;
  /** Both sockets are gone. */
  readonly closed: boolean;
  /** Settles once both sockets are gone. */
  readonly ended: Promise<void>;
  /** The client closed its side (or it was cut): what the host did, whether or not the target has heard. */
  readonly clientClosed: boolean;
  /** Settles once the client's side is closed. */
  readonly clientEnded: Promise<void>;
  /** Stops forwarding either way; nothing is read from either side, nothing is closed. */
  freeze(): void;
  /** Forwards again, what was held first; a close that happened meanwhile passes on now. */
  thaw(): void;
  /** Closes both sides at once. */
  cut(): void;
}

/**
 * A TCP proxy in front of a test broker that can do to a connection what a network does to it:
 * forward, freeze (hold it open and forward nothing — what a suspended laptop's connection is,
 * seen from either end), refuse new connections, and cut. TLS passes through untouched, so the
 * host still checks the broker's own certificate through it.
 */
export interface FreezeProxy {
  /** `tls://127.0.0.1:PORT`: what a host pins as its broker address. */
  url: string;
  port: number;
  /** What happens to connections accepted from now on (`forward` at the start). */
  admit(mode: AdmitMode): void;
  /** Freezes every open connection. New ones follow the admit mode. */
  freeze(): void;
  /** Thaws every open connection. */
  thaw(): void;
  /** Thaws everything and forwards new connections again. */
  restore(): void;
  /** Closes every open connection. */
  cut(): void;
  /** Every connection accepted so far, oldest first (refused ones are not among them). */
  connections(): readonly ProxiedConnection[];
  /** When each refused connection came (`performance.now()`), oldest first. */
  refusals(): readonly number[];
  /** The ones whose client side is still open. */
  open(): ProxiedConnection[];
  /** The next connection accepted after this call, within `timeoutMs`. */
  nextConnection(timeoutMs?: number): Promise<ProxiedConnection>;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a freeze proxy on a free port of 127.0.0.1, forwarding to `target`. */
export async function startFreezeProxy(target: { host?: string; port: number }): Promise<FreezeProxy> {
  const host = target.host ?? '127.0.0.1';
  let mode: AdmitMode = 'forward';
  const all: Pair[] = [];
  const refused: number[] = [];
  const waiting = new Set<(connection: ProxiedConnection) => void>();

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    if (mode === 'refuse') {
      refused.push(performance.now());
      client.resetAndDestroy();
      return;
    }
    const pair = new Pair(all.length + 1, client, net.connect({ host, port: target.port }), mode === 'hold');
    all.push(pair);
    for (const wake of [...waiting]) wake(pair);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const open = (): Pair[] => all.filter((pair) => !pair.clientClosed);
  const alive = (): Pair[] => all.filter((pair) => !pair.closed);

  return {
    url: `tls://127.0.0.1:${port}`,
    port,
    admit: (next) => { mode = next; },
    freeze: () => { for (const pair of alive()) pair.freeze(); },
    thaw: () => { for (const pair of alive()) pair.thaw(); },
    restore: () => {
      mode = 'forward';
      for (const pair of alive()) pair.thaw();
    },
    cut: () => { for (const pair of alive()) pair.cut(); },
    connections: () => [...all],
    refusals: () => [...refused],
    open,
    nextConnection: (timeoutMs = 10_000) => new Promise<ProxiedConnection>((resolve, reject) => {
      const wake = (connection: ProxiedConnection): void => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve(connection);
      };
      const timer = setTimeout(() => {
        waiting.delete(wake);
        reject(new Error(`no connection reached the proxy within ${timeoutMs} ms (${all.length} so far)`));
      }, timeoutMs);
      waiting.add(wake);
    }),
    close: async () => {
      for (const pair of all) pair.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(all.map((pair) => pair.ended));
    },
  };
}

/**
 * A client socket and its socket to the target, forwarded by hand so it can be frozen. A frozen
 * pair still reads both sockets (so it sees a side close, as a test needs to) but passes
 * nothing on, not even the close, until it thaws.
 */
class Pair implements ProxiedConnection {
  readonly acceptedAt = performance.now();
  readonly ended: Promise<void>;
  readonly clientEnded: Promise<void>;
  private isFrozen: boolean;
  private isClientClosed = false;
  private open = 2;
  /** What arrived while frozen, in order, as the writes and ends to make on thawing. */
  private held: Array<() => void> = [];

  constructor(readonly id: number, private readonly client: net.Socket, private readonly upstream: net.Socket, frozen: boolean) {
    this.isFrozen = frozen;
    let ended: () => void = () => undefined;
    this.ended = new Promise((resolve) => { ended = resolve; });
    const closedOne = (): void => {
      this.open -= 1;
      if (this.open === 0) ended();
    };
    let clientEnded: () => void = () => undefined;
    this.clientEnded = new Promise((resolve) => { clientEnded = resolve; });
    client.once('close', () => {
      this.isClientClosed = true;
      clientEnded();
    });
    this.forward(client, upstream, closedOne);
    this.forward(upstream, client, closedOne);
    client.resume();
  }

  get frozen(): boolean {
    return this.isFrozen;
  }

  get closed(): boolean {
    return this.open === 0;
  }

  get clientClosed(): boolean {
    return this.isClientClosed;
  }

  freeze(): void {
    this.isFrozen = true;
  }

  thaw(): void {
    if (!this.isFrozen) return;
    this.isFrozen = false;
    const held = this.held;
    this.held = [];
    for (const pass of held) pass();
  }

  cut(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  private forward(from: net.Socket, to: net.Socket, closedOne: () => void): void {
    const passOrHold = (pass: () => void): void => {
      if (this.isFrozen) this.held.push(pass);
      else pass();
    };
    from.on('data', (chunk: Buffer) => {
      passOrHold(() => {
        if (!to.destroyed && !to.write(chunk)) from.pause();
      });
    });
    to.on('drain', () => from.resume());
    from.on('error', () => undefined);
    from.on('close', (hadError) => {
      closedOne();
      passOrHold(() => {
        if (hadError) to.destroy();
        else to.end();
      });
    });
  }
}
