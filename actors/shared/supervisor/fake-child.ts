import { fromPromise } from 'xstate';

/** One run of a fake child: the test decides when it fails or finishes, and sees when it is stopped. */
export interface FakeIncarnation {
  /** 1 for the first start, 2 for the first restart, … */
  readonly number: number;
  /** The input the supervisor handed this incarnation. */
  readonly input: unknown;
  /** Makes this incarnation fail with `new Error(message)`. */
  fail(message: string): void;
  /** Makes this incarnation end normally. */
  finish(output?: unknown): void;
  /** True once the supervisor stopped it (its cleanup ran); a child that ended by itself is not stopped. */
  readonly stopped: boolean;
  /** True once it failed or finished. */
  readonly ended: boolean;
}

/**
 * A fake supervised child for tests: a promise actor whose outcome the test commands, recording
 * every incarnation and whether the supervisor stopped it (the abort signal a promise actor is
 * given is its cleanup). Failures and exits reach the supervisor a few microtasks later, so tests
 * `await settle()` after commanding one.
 */
export class FakeChild {
  /** Every incarnation started so far, oldest first. */
  readonly incarnations: FakeIncarnation[] = [];

  /** The logic to supervise. */
  readonly logic = fromPromise<unknown, unknown>(({ input, signal }) =>
    new Promise<unknown>((resolve, reject) => {
      let stopped = false;
      let ended = false;
      const incarnation: FakeIncarnation = {
        number: this.incarnations.length + 1,
        input,
        fail: (message) => {
          ended = true;
          reject(new Error(message));
        },
        finish: (output) => {
          ended = true;
          resolve(output);
        },
        get stopped() {
          return stopped;
        },
        get ended() {
          return ended;
        },
      };
      signal.addEventListener('abort', () => {
        if (!ended) stopped = true;
      });
      this.incarnations.push(incarnation);
    }));

  /** The most recent incarnation; throws when none has started, which is a test bug. */
  get current(): FakeIncarnation {
    const last = this.incarnations.at(-1);
    if (last === undefined) throw new Error('the fake child has not been started');
    return last;
  }

  /** How many incarnations are running now (started, not ended, not stopped). */
  get running(): number {
    return this.incarnations.filter((i) => !i.ended && !i.stopped).length;
  }
}

/** Lets promise settlements and the actor events they cause run to completion. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
