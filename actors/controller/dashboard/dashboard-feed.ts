import type { DashboardSnapshot } from './dashboard-snapshot';

/** How often the feed reads the mesh while a page is open: well inside the second a change must show within. */
export const FEED_EVERY_MS = 400;

/** One open page's event stream: what the feed writes to. */
export interface FeedClient {
  send(json: string): void;
}

/**
 * The live feed behind every open page: reads the mesh every `everyMs` while at least one page
 * is open (nothing while none is), and sends the snapshot to every page when it differs from
 * the last one sent, apart from when it was read. A page that opens is sent the last snapshot
 * at once. Reads never overlap: a slow controller slows the feed rather than piling calls on it.
 */
export class DashboardFeed {
  readonly #clients = new Set<FeedClient>();
  readonly #read: () => Promise<DashboardSnapshot>;
  readonly #everyMs: number;
  #last: { snapshot: DashboardSnapshot; json: string; key: string } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;
  #stopped = false;

  constructor(read: () => Promise<DashboardSnapshot>, everyMs = FEED_EVERY_MS) {
    this.#read = read;
    this.#everyMs = everyMs;
  }

  /** The last snapshot read, if any. */
  get last(): DashboardSnapshot | undefined {
    return this.#last?.snapshot;
  }

  /** Adds a page; returns how to remove it. */
  join(client: FeedClient): () => void {
    this.#clients.add(client);
    if (this.#last !== undefined) client.send(this.#last.json);
    if (this.#timer === undefined && this.#reading === undefined) void this.#tick();
    return () => {
      this.#clients.delete(client);
    };
  }

  /** Reads once now and sends it if it changed; resolves when done (for a page asking for JSON). */
  async refresh(): Promise<DashboardSnapshot | undefined> {
    this.#reading ??= this.#readOnce().finally(() => {
      this.#reading = undefined;
    });
    await this.#reading;
    return this.last;
  }

  /** Stops reading; open pages are closed by the server. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    if (this.#stopped || this.#clients.size === 0) return;
    await this.refresh();
    if (this.#stopped || this.#clients.size === 0) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#everyMs);
  }

  async #readOnce(): Promise<void> {
    const snapshot = await this.#read();
    const key = JSON.stringify({ ...snapshot, read_at: undefined });
    if (this.#last !== undefined && this.#last.key === key) return;
    const json = JSON.stringify(snapshot);
    this.#last = { snapshot, json, key };
    for (const client of this.#clients) client.send(json);
  }
}
