import { setTimeout as sleep } from 'node:timers/promises';

/** What one look found: the condition holds (with what it yields), or not yet (and what was seen). */
export type Look<T> = { done: true; value: T } | { done: false; seen: string };

/** The condition holds; `until` returns `value`. */
export function done<T>(value: T): Look<T> {
  return { done: true, value };
}

/** The condition does not hold yet; `seen` is what a failure message quotes if it never does. */
export function notYet<T = never>(seen: string): Look<T> {
  return { done: false, seen };
}

/** The condition was not met before the deadline. The message names it and what was last seen. */
export class WaitedTooLong extends Error {}

/** Thrown by a look when the condition can no longer come (the process it waits on has ended). */
export class NeverComing extends Error {}

/** How long to wait, and how often to look. */
export interface UntilOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Looks at `look` until it says done, and returns what it yielded. Real processes take as long as
 * they take: a test waits for the condition it needs, never for a fixed time, and when the
 * condition never comes the failure says what was awaited and what was there instead.
 */
export async function until<T>(what: string, look: () => Promise<Look<T>> | Look<T>, options: UntilOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  let last: Look<T> | undefined;
  for (;;) {
    try {
      last = await look();
    } catch (error) {
      if (error instanceof NeverComing) throw error;
      // A look that throws (a file half written, a command that failed) is one more miss.
      last = notYet(`the look failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (last.done) return last.value;
    if (Date.now() >= deadline) {
      throw new WaitedTooLong(`waited ${Math.round(timeoutMs / 1000)} s for ${what}; last seen:\n${last.seen}`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}
