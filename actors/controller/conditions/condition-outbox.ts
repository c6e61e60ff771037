import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConditionEvent } from '../../../schema/condition';
import { conditionEventSubject } from './condition-subjects';
import type { ControllerLog } from '../logs/log-fields';

/** Transitions held for the bus at most; past it the oldest are dropped, and that is logged. */
export const OUTBOX_HELD_MAX = 10_000;

/** What a ConditionOutbox needs. */
export interface ConditionOutboxOptions {
  nc: NatsConnection;
  /** The history bucket. */
  history: KV;
  log: ControllerLog;
  /** How long a flush may wait for the broker to confirm (5 s). */
  confirmWithinMs?: number;
}

/**
 * Keeps each transition in the history bucket and publishes it as an event, offering again what
 * the bus did not take (it is away, the history write failed) at the next `flush`: the
 * condition itself is already written, and its record follows once the bus is back. Held above
 * the watchdog's child, so a restart of the child does not drop what is waiting.
 */
export class ConditionOutbox {
  readonly #options: ConditionOutboxOptions;
  readonly #pending: Array<{ key: string; event: ConditionEvent; kept: boolean }> = [];
  #flushing: Promise<void> | undefined;

  constructor(options: ConditionOutboxOptions) {
    this.#options = options;
  }

  /** Queues a transition under its history key and tries to deliver everything waiting. */
  offer(key: string, event: ConditionEvent): Promise<void> {
    this.#pending.push({ key, event, kept: false });
    if (this.#pending.length > OUTBOX_HELD_MAX) {
      this.#pending.splice(0, this.#pending.length - OUTBOX_HELD_MAX);
      this.#options.log(`conditions: more than ${OUTBOX_HELD_MAX} transitions waited for the bus; the oldest were dropped from history and events`, { level: 'error' });
    }
    return this.flush();
  }

  /** How many transitions wait for the bus. */
  waiting(): number {
    return this.#pending.length;
  }

  /** Delivers what waits, in order, stopping at the first the bus does not take. One flush at a time. */
  flush(): Promise<void> {
    if (this.#flushing !== undefined) return this.#flushing.then(() => (this.#pending.length > 0 ? this.flush() : undefined));
    this.#flushing = this.#deliver().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #deliver(): Promise<void> {
    const { nc, history, log } = this.#options;
    while (this.#pending.length > 0) {
      const next = this.#pending[0];
      if (next === undefined) return;
      try {
        if (!next.kept) {
          await history.create(next.key, JSON.stringify(next.event)).catch(async (error: unknown) => {
            // Already kept by an earlier try whose confirmation was lost.
            if ((await history.get(next.key).catch(() => null)) === null) throw error;
          });
          next.kept = true;
        }
        nc.publish(conditionEventSubject(next.event.event), JSON.stringify(next.event));
        await withTimeout(nc.flush(), this.#options.confirmWithinMs ?? 5_000);
        this.#pending.shift();
      } catch (error) {
        log(`conditions: ${this.#pending.length} transition(s) wait for the bus (offered again at the watchdog's next look): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn', waiting: this.#pending.length });
        return;
      }
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`the broker did not confirm within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
