import { fromPromise, type EventObject } from 'xstate';
import { linkMachine, silenceProblem, type AttemptInput, type ConnectionInput } from '../../../machines/link.machine';
import { retryDelay } from './retry-delay';

/** Why a linked connection is let go. */
export type LinkEnd =
  /** It ended by itself: closed by the broker, cut off, or dead by its pings. */
  | { kind: 'ended'; why: string }
  /** It did not answer the ping after a rouse in time. */
  | { kind: 'silent'; why: string }
  /** A new connection made after a rouse linked before the old one answered. */
  | { kind: 'replaced' }
  /** The host is stopping. */
  | { kind: 'stopping' };

/**
 * What the link actor calls. `C` is the connection (a NatsConnection on the host; anything in
 * tests). Each piece is narrow so a test can hand in a few lines of fake.
 */
export interface LinkDeps<C> {
  /**
   * One attempt to reach the broker, resolving with the open connection. When `signal` aborts
   * the attempt is abandoned, and a connection it has made or makes later is closed.
   */
  attempt(input: AttemptInput, signal: AbortSignal): Promise<C>;
  /**
   * Resolves, with why, once `connection` has ended: closed by either side, or found dead by
   * its own pings. Never rejects. The watch owns the connection: aborting `signal` closes it.
   */
  watch(connection: C, signal: AbortSignal): Promise<string>;
  /** Resolves when the broker answers a ping on `connection`; never rejects (a close is the watch's to report). */
  check(connection: C, signal: AbortSignal): Promise<void>;
  /** Jitter in [0, 1): the retry delay is the backoff ceiling less up to half of it. Math.random unless given. */
  random?(): number;
  /** A connection is linked; `replacing` when it takes over from one that did not answer a rouse. */
  linked?(connection: C, replacing: boolean): void;
  /** The linked connection is let go (and closed right after), and why. */
  unlinked?(connection: C, end: LinkEnd): void;
  /** Each retry delay as it is chosen, with the failure that led to it. */
  waiting?(delayMs: number, problem: string | null): void;
}

/**
 * The link machine with real work behind it (see machines/link.machine.ts): attempts, a watch
 * over the linked connection, a ping when roused, and the retry delay jittered with `random`.
 * The machine passes connections around as opaque values; they are the deps' own `C`.
 */
export function linkLogic<C>(deps: LinkDeps<C>) {
  const random = deps.random ?? Math.random;
  return linkMachine.provide({
    actors: {
      attempt: fromPromise<unknown, AttemptInput>(({ input, signal }) => deps.attempt(input, signal)),
      watch: fromPromise<string, ConnectionInput>(({ input, signal }) => deps.watch(input.connection as C, signal)),
      check: fromPromise<void, ConnectionInput>(({ input, signal }) => deps.check(input.connection as C, signal)),
    },
    delays: {
      retryDelay: ({ context }) => {
        const delay = retryDelay(context.failures, context.backoff, random);
        deps.waiting?.(delay, context.lastProblem);
        return delay;
      },
    },
    actions: {
      // The events typed for the machine are only the ones sent to it; these actions also run
      // on the outcomes of its own actors, which is what they look at.
      announceLinked: ({ context, event }) => deps.linked?.(context.connection as C, (event as EventObject).type === 'xstate.done.actor.standby'),
      announceUnlinked: ({ context, event }) => {
        // Exit actions run before the transition's own, so the reason is read from the event.
        const happened = event as EventObject & { output?: unknown };
        let end: LinkEnd;
        if (happened.type === 'xstate.done.actor.watch') end = { kind: 'ended', why: String(happened.output) };
        else if (happened.type === 'xstate.done.actor.standby') end = { kind: 'replaced' };
        else if (happened.type === 'host.stopping') end = { kind: 'stopping' };
        else end = { kind: 'silent', why: silenceProblem(context.timings) };
        deps.unlinked?.(context.connection as C, end);
      },
    },
  });
}
