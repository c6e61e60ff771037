import type { ControllerLog } from '../logs/log-fields';
import { JetStreamApiError } from '@nats-io/jetstream';
import { KvWatchInclude, type KvEntry } from '@nats-io/kv';
import type { LeaseRenewed, LeaseTaken, LeaseTimings } from '../../../machines/lease.machine';
import { LeaseHolder } from '../../../schema/lease-holder';
import { raiseEpochFloor, readEpochFloor } from '../store/controller-epoch.repo';
import type { Sql } from '../store/sql-store';
import type { KvBucket } from '../serve/ensure-kv-bucket';
import { LEASE_KEY } from './lease-bucket';
import { LeaseEpochBehindFloor, LeaseHeldElsewhere, LeaseKeyForeign, LeaseRenewalRefused, LeaseUnreachable } from './lease-errors';

/** The broker's answer to a compare-and-set at a revision that is not the key's: "wrong last sequence". */
const WRONG_LAST_SEQUENCE = 10071;

/** What the lease actor does to the bucket: the narrow interface its tests replace. */
export interface LeaseOperations {
  /** Takes the lease; throws LeaseHeldElsewhere, LeaseUnreachable or LeaseEpochBehindFloor. */
  take(signal: AbortSignal): Promise<LeaseTaken>;
  /** Renews it at `revision`; throws LeaseRenewalRefused or LeaseUnreachable. */
  renew(revision: number): Promise<LeaseRenewed>;
  /** Gives it back (deletes the key) if it is still this controller's. */
  release(revision: number): Promise<void>;
  /** Calls `onFreed` whenever the key is deleted; returns how to stop listening. */
  watchFreed(onFreed: () => void): () => void;
  /** Who holds the lease now and at which revision, or null when nobody does. */
  current(): Promise<{ holder: LeaseHolder | null; revision: number } | null>;
}

/** Who this controller is, as its key says. */
export interface LeaseIdentity {
  /** `<hostname>:<pid>`. */
  controller: string;
  /** Random per process (see LeaseHolder). */
  instance: string;
}

/** What a KvLease needs. */
export interface KvLeaseOptions {
  bucket: KvBucket;
  /** The store holding the epoch floor (controller_epoch). */
  store: Sql;
  identity: LeaseIdentity;
  timings: Pick<LeaseTimings, 'ttlMs' | 'marginMs'>;
  /** The monotonic clock the gate reads, in ms (performance.now unless given). */
  now?: () => number;
  /** The wall clock, for the times written in the key and the floor. */
  wallClock?: () => Date;
  /** One line for the operator's log. */
  log?: ControllerLog;
}

/**
 * The lease over the broker's KV bucket (see machines/lease.machine.ts for the rules).
 *
 * The epoch is the revision the key was taken at, and it must be above the store's epoch floor:
 * a bucket made again from nothing (a broker reinstalled, its store lost) starts its revisions
 * at 1. When the revision taken is at or below the floor, the bucket's stream is compacted past
 * the floor (a purge up to floor + 1, which sets the next revision to floor + 1; the bucket held
 * only this controller's key) and the key is taken again, so the epoch is always a revision and
 * always higher than any acted under before. The floor is then raised to the epoch before the
 * lease counts as taken.
 *
 * The deadline the gate keeps is measured from when each successful write was sent, on the
 * monotonic clock: the broker ages a key from when it stored it, never earlier.
 *
 * A value in the key that is not a lease holder is LeaseKeyForeign, from a take or a renewal:
 * the machine stops acting and stands by (it is nobody's lease to lose to), without exiting.
 *
 * A write whose answer never came (a timeout) may still have landed. Each value names this
 * process's random instance, so when a compare-and-set is refused the key is read: if it is this
 * controller's own write, it is taken as such and written again at its revision.
 */
export class KvLease implements LeaseOperations {
  readonly #bucket: KvBucket;
  readonly #store: Sql;
  readonly #identity: LeaseIdentity;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #wallClock: () => Date;
  readonly #log: ControllerLog;
  #takenAt: string | undefined;

  constructor(options: KvLeaseOptions) {
    this.#bucket = options.bucket;
    this.#store = options.store;
    this.#identity = options.identity;
    this.#windowMs = options.timings.ttlMs - options.timings.marginMs;
    this.#now = options.now ?? (() => performance.now());
    this.#wallClock = options.wallClock ?? (() => new Date());
    this.#log = options.log ?? (() => undefined);
  }

  async take(signal: AbortSignal): Promise<LeaseTaken> {
    const { kv } = this.#bucket;
    this.#takenAt = this.#wallClock().toISOString();
    let sentAt = this.#now();
    let epoch: number;
    let revision: number;
    try {
      epoch = revision = await kv.create(LEASE_KEY, this.#value());
    } catch (error) {
      if (!isWrongLastSequence(error)) throw new LeaseUnreachable('the lease could not be asked for', error);
      const entry = await this.#read();
      if (entry !== null && holderOf(entry) === null) throw new LeaseKeyForeign(entry.revision, entry.length);
      if (!this.#isOwn(entry)) throw new LeaseHeldElsewhere(describeHolder(entry));
      // A take of ours that landed after its answer was given up on: write it again now, so the
      // deadline counts from a send time this process knows.
      epoch = entry.revision;
      sentAt = this.#now();
      revision = await this.#write(entry.revision).catch((failure: unknown) => {
        throw isWrongLastSequence(failure) ? new LeaseHeldElsewhere('another controller (the key changed as it was read)') : new LeaseUnreachable('the lease could not be asked for', failure);
      });
    }
    try {
      const floor = await this.#floor();
      if (epoch <= floor) {
        this.#log(`lease: taken at revision ${epoch}, not above the store's epoch floor ${floor} (the bucket was made again); raising the bucket past it`, { level: 'warn', epoch, floor });
        await this.#compactPast(floor);
        sentAt = this.#now();
        try {
          epoch = await kv.create(LEASE_KEY, this.#value());
        } catch (error) {
          if (isWrongLastSequence(error)) throw new LeaseHeldElsewhere(describeHolder(await this.#read().catch(() => null)));
          throw new LeaseUnreachable('the lease could not be asked for', error);
        }
        revision = epoch;
      }
      const raised = await raiseEpochFloor(this.#store, epoch, this.#identity.controller, this.#wallClock()).catch((error: unknown) => {
        throw new LeaseUnreachable('the epoch floor could not be raised in the store', error);
      });
      if (!raised.raised) throw new LeaseEpochBehindFloor(epoch, raised.floor.epoch);
    } catch (error) {
      await this.release(revision).catch(() => undefined);
      throw error;
    }
    if (signal.aborted) {
      // The controller stopped while this take was under way: give back what it got.
      await this.release(revision).catch(() => undefined);
      throw new LeaseUnreachable('the lease was taken as the controller stopped, and given back', signal.reason);
    }
    return { epoch, revision, actingUntil: sentAt + this.#windowMs };
  }

  async renew(revision: number): Promise<LeaseRenewed> {
    const sentAt = this.#now();
    try {
      return { revision: await this.#write(revision), actingUntil: sentAt + this.#windowMs };
    } catch (error) {
      if (!isWrongLastSequence(error)) throw new LeaseUnreachable('the lease could not be renewed', error);
    }
    const entry = await this.#read();
    if (entry !== null && holderOf(entry) === null) throw new LeaseKeyForeign(entry.revision, entry.length);
    if (!this.#isOwn(entry)) throw new LeaseRenewalRefused(`the renewal at revision ${revision} was refused: ${entry === null ? 'the key is gone (it expired)' : `the lease is held by ${describeHolder(entry)}`}`);
    // An earlier renewal landed after its answer was given up on; the key is still ours.
    const again = this.#now();
    try {
      return { revision: await this.#write(entry.revision), actingUntil: again + this.#windowMs };
    } catch (error) {
      if (isWrongLastSequence(error)) throw new LeaseRenewalRefused(`the renewal at revision ${entry.revision} was refused: the key changed under it`);
      throw new LeaseUnreachable('the lease could not be renewed', error);
    }
  }

  async release(revision: number): Promise<void> {
    const { kv } = this.#bucket;
    try {
      await kv.delete(LEASE_KEY, { previousSeq: revision });
      return;
    } catch (error) {
      if (!isWrongLastSequence(error)) throw new LeaseUnreachable('the lease could not be given back', error);
    }
    const entry = await this.#read();
    if (!this.#isOwn(entry)) throw new LeaseRenewalRefused('the lease was not given back: it is not this controller\'s any more');
    await kv.delete(LEASE_KEY, { previousSeq: entry.revision }).catch((error: unknown) => {
      throw new LeaseUnreachable('the lease could not be given back', error);
    });
  }

  watchFreed(onFreed: () => void): () => void {
    let stopped = false;
    let stop: (() => void) | undefined;
    void (async () => {
      try {
        const watch = await this.#bucket.kv.watch({ key: LEASE_KEY, include: KvWatchInclude.UpdatesOnly });
        if (stopped) {
          watch.stop();
          return;
        }
        stop = () => watch.stop();
        for await (const entry of watch) if (entry.operation !== 'PUT') onFreed();
      } catch (error) {
        // Trying every contendEveryMs still finds a freed key; the watch only makes it quicker.
        if (!stopped) this.#log(`lease: could not watch the key for a holder giving it back: ${(error as Error)?.message ?? String(error)}`, { level: 'warn' });
      }
    })();
    return () => {
      stopped = true;
      stop?.();
    };
  }

  async current(): Promise<{ holder: LeaseHolder | null; revision: number } | null> {
    const entry = await this.#read();
    if (entry === null) return null;
    return { holder: holderOf(entry), revision: entry.revision };
  }

  #value(): string {
    const holder: LeaseHolder = {
      controller: this.#identity.controller,
      instance: this.#identity.instance,
      taken_at: this.#takenAt ?? this.#wallClock().toISOString(),
      renewed_at: this.#wallClock().toISOString(),
    };
    return JSON.stringify(holder);
  }

  #write(revision: number): Promise<number> {
    return this.#bucket.kv.update(LEASE_KEY, this.#value(), revision);
  }

  /** The key as it is now: null when there is none, or only a deletion left. */
  async #read(): Promise<KvEntry | null> {
    let entry: KvEntry | null;
    try {
      entry = await this.#bucket.kv.get(LEASE_KEY);
    } catch (error) {
      throw new LeaseUnreachable('the lease could not be read', error);
    }
    return entry === null || entry.operation !== 'PUT' ? null : entry;
  }

  #isOwn(entry: KvEntry | null): entry is KvEntry {
    return entry !== null && holderOf(entry)?.instance === this.#identity.instance;
  }

  async #floor(): Promise<number> {
    try {
      return (await readEpochFloor(this.#store))?.epoch ?? 0;
    } catch (error) {
      throw new LeaseUnreachable('the epoch floor could not be read from the store', error);
    }
  }

  /** Purges the bucket's stream up to `floor + 1`: its next revision is then `floor + 1`. */
  async #compactPast(floor: number): Promise<void> {
    try {
      await this.#bucket.jsm.streams.purge(this.#bucket.stream, { seq: floor + 1 });
    } catch (error) {
      throw new LeaseUnreachable('the lease bucket could not be raised past the epoch floor', error);
    }
  }
}

function isWrongLastSequence(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE;
}

function holderOf(entry: KvEntry): LeaseHolder | null {
  try {
    const parsed = LeaseHolder.safeParse(entry.json());
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The holder as a person reads it: `host:123 (since 2026-…)`; the same through its renewals. */
function describeHolder(entry: KvEntry | null): string {
  if (entry === null) return 'nobody (the key was given back or expired just now)';
  const holder = holderOf(entry);
  if (holder === null) return `a value that is not a lease holder, at revision ${entry.revision}`;
  return `${holder.controller} (since ${holder.taken_at})`;
}
