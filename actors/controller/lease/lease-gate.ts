import type { GateParams } from '../../../machines/lease.machine';
import { NotActing } from './lease-errors';

/** Where this controller stands with the lease, for status and the tree. */
export interface LeaseStanding {
  /**
   * `acting`: holds the lease and its deadline has not passed; `quiet`: holds it but could not
   * renew in time, so it does not act; `standing by`: someone else holds it, or it was not taken
   * yet; `stopped`: gave it back; `lost`: a renewal was refused.
   */
  state: 'acting' | 'quiet' | 'standing by' | 'stopped' | 'lost';
  /** The epoch this controller acts (or acted) under; null before it first held the lease. */
  epoch: number | null;
  /** Milliseconds of acting left on the clock; 0 when not acting. */
  acting_for_ms: number;
  /** Why it is not acting: who holds the lease, the renewal that failed, the loss. */
  note: string | null;
}

/**
 * The gate every act of the controller passes: open only while this controller holds the lease
 * and the monotonic clock is before the deadline the lease machine handed it (the last
 * successful write's send time plus the age limit, less the margin). It lives above the lease
 * actor, so every part reads one gate whatever happens to the actor, and the clock is read at
 * every question: a gate the machine has not closed yet (its timers late behind a busy event
 * loop) is still shut once the deadline passes.
 */
export class LeaseGate {
  readonly #now: () => number;
  #held = false;
  #ended: 'stopped' | 'lost' | undefined;
  #epoch: number | null = null;
  #revision: number | null = null;
  #until = 0;
  #note: string | null = 'the lease has not been taken yet';
  #waiters: Array<() => void> = [];
  #settle: ((outcome: 'held' | 'standing by') => void) | undefined;
  readonly #settled: Promise<'held' | 'standing by'>;

  /** `now` is the monotonic clock, in ms; performance.now unless given. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#settled = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  /**
   * Resolves with how the first try for the lease came out: `held`, or `standing by` (someone
   * else holds it, or it could not be asked for). A serving controller starts answering only
   * after this, as the holder or as a standby.
   */
  settled(): Promise<'held' | 'standing by'> {
    return this.#settled;
  }

  /** True while this controller may act: it holds the lease and the deadline has not passed. */
  isActing(): boolean {
    return this.#held && this.#now() < this.#until;
  }

  /**
   * The epoch declarations are sent under: the one the lease was taken at. Throws NotActing
   * before the lease was first taken, since there is none yet.
   */
  epoch(): number {
    if (this.#epoch === null) throw new NotActing('name an epoch', this.#note ?? 'the lease has not been taken yet');
    return this.#epoch;
  }

  /** Refuses (NotActing) unless the gate is open; `what` completes "it did not …". */
  assertActing(what: string): void {
    if (!this.isActing()) throw new NotActing(what, this.standing().note ?? 'it does not hold the lease');
  }

  /** Where the controller stands with the lease, read now. */
  standing(): LeaseStanding {
    const now = this.#now();
    if (this.#ended !== undefined) return { state: this.#ended, epoch: this.#epoch, acting_for_ms: 0, note: this.#note };
    if (!this.#held) return { state: 'standing by', epoch: this.#epoch, acting_for_ms: 0, note: this.#note };
    if (now < this.#until) return { state: 'acting', epoch: this.#epoch, acting_for_ms: Math.round(this.#until - now), note: null };
    return {
      state: 'quiet',
      epoch: this.#epoch,
      acting_for_ms: 0,
      note: this.#note ?? `the lease was not renewed in time; acting stopped ${Math.round(now - this.#until)} ms ago, before it could expire`,
    };
  }

  /** Resolves once the gate is (or next becomes) open; rejects if `signal` aborts first. */
  whenHeld(signal?: AbortSignal): Promise<void> {
    if (this.isActing()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((waiter) => waiter !== wake);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(wake);
    });
  }

  /** The lease machine took or renewed the lease: acting is allowed until `actingUntil`. */
  open(params: GateParams): void {
    this.#held = true;
    this.#ended = undefined;
    this.#epoch = params.epoch;
    this.#revision = params.revision;
    this.#until = params.actingUntil;
    this.#note = null;
    this.#settle?.('held');
    this.#settle = undefined;
    if (this.isActing()) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** The lease machine left holding: nothing may act, whatever the clock says. */
  close(): void {
    this.#held = false;
    this.#until = 0;
  }

  /**
   * The key's revision at the last write, while the lease machine holds the lease (else null):
   * what a controller whose tree stopped under it gives the lease back at.
   */
  heldRevision(): number | null {
    return this.#held ? this.#revision : null;
  }

  /** Why acting is not possible now (who holds the lease, a renewal that failed). */
  note(reason: string): void {
    this.#note = reason;
    this.#settle?.('standing by');
    this.#settle = undefined;
  }

  /** The lease ended: given back on a stop, or lost. */
  end(how: 'stopped' | 'lost', reason: string | null): void {
    this.close();
    this.#ended = how;
    if (reason !== null) this.#note = reason;
  }
}
