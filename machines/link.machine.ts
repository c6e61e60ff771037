import { assign, fromPromise, setup } from 'xstate';

// The host's outbound link to its broker (seed 000, "Going away and coming back").
//
// The machine owns the connection's life: an attempt opens it, a watch holds it while it lasts,
// and leaving `linked` ends it. The NATS client's own reconnection is not used, so there is one
// place that decides when to try again, and it follows the rules below.
//
// A rouse (SIGUSR1, from the resume unit and the network dispatcher) says "the machine woke or
// its network changed". It ends what may be stuck: an attempt under way, or a connection that
// looks alive but does not answer. It never ends the wait between attempts, and it never
// resets the backoff: being roused says the machine changed, not that whatever refused the
// connection has stopped. Rouses that arrive while one is being dealt with are absorbed, so a
// machine that suspends and resumes over and over builds no backlog of reconnections.
//
// On a link that answers, a rouse costs one ping. On one that does not answer within
// `standbyAfterMs`, a second connection is tried beside it: whichever comes first wins — the
// old link's answer (the new attempt is called off) or the new link (the old connection is
// closed). A connection that is only slow therefore is never dropped for a rouse, and one that
// is dead is replaced in about the time it takes to make a connection, without waiting out
// `livenessTimeoutMs`, which only bounds how long the old one is given.
//
// Time without a clock: every wait is a named delay read from the context, so the actor
// system's clock (a simulated one in tests) measures it; the jitter of the retry delay comes in
// through the provided `retryDelay`, which here is the ceiling without jitter.

/** Exponential backoff between attempts: `firstMs`, doubling, never more than `capMs`. */
export interface LinkBackoff {
  /** The wait after a link ends, or after the first failed attempt. */
  firstMs: number;
  /** The longest wait, however many attempts have failed. */
  capMs: number;
}

/**
 * 200 ms (jittered down to 100–200 ms), doubling, at most one minute. The first step is short
 * because a link that ends after working has usually just lost its path, and a rouse is
 * followed at once by a new attempt. The cap is one minute rather than longer because a rouse
 * does not shorten a wait: the cap is how long a woken machine may sit out a wait that began
 * before it slept.
 */
export const DEFAULT_LINK_BACKOFF: LinkBackoff = { firstMs: 200, capMs: 60_000 };

/** How long the machine gives each thing it waits for. */
export interface LinkTimings {
  /** One attempt: certificate probe, TLS, CONNECT and the first PONG. */
  attemptTimeoutMs: number;
  /** After a rouse, how long a linked connection has to answer a ping before it is ended. */
  livenessTimeoutMs: number;
  /** After a rouse, how long a silent link is waited on before a new connection is tried beside it. */
  standbyAfterMs: number;
  /** How long a link must hold, unquestioned, before the failures before it are forgiven and the backoff starts again from its first step. */
  settledAfterMs: number;
}

/** The defaults on a real machine. */
export const DEFAULT_LINK_TIMINGS: LinkTimings = {
  attemptTimeoutMs: 10_000,
  livenessTimeoutMs: 2_000,
  standbyAfterMs: 250,
  settledAfterMs: 10_000,
};

/** What the link machine is started with; anything left out is the default. */
export interface LinkInput {
  backoff?: Partial<LinkBackoff>;
  timings?: Partial<LinkTimings>;
}

/** What the link remembers. */
export interface LinkContext {
  backoff: LinkBackoff;
  timings: LinkTimings;
  /**
   * Failed attempts (a rouse that ended an attempt counts as one, and so does a link that
   * ended) since the last link that held for `settledAfterMs`: the retry delay grows with it.
   */
  failures: number;
  /** The open connection while linked, null otherwise. Opaque here: made by `attempt`, handed to `watch` and `check`. */
  connection: unknown;
  /** Why the last attempt failed or the last link ended; null before anything went wrong. */
  lastProblem: string | null;
}

/**
 * Events the link accepts. The outcomes of its work arrive as `xstate.done.actor.attempt` /
 * `xstate.error.actor.attempt`, `xstate.done.actor.standby` / `xstate.error.actor.standby`,
 * `xstate.done.actor.watch` and `xstate.done.actor.check`; its waits as
 * `xstate.after.<delay>.<state id>`.
 */
export type LinkEvent =
  /** The machine woke or its network changed (SIGUSR1 from the resume unit or the dispatcher). */
  | { type: 'operator.rouse' }
  /** The host is stopping: end whatever is under way and close the connection. */
  | { type: 'host.stopping' };

/** What an attempt is given. */
export interface AttemptInput {
  /** The attempt's own bound on the NATS handshake; the machine gives up at the same time. */
  timeoutMs: number;
}

/** What `watch` and `check` are given: the connection `attempt` made. */
export interface ConnectionInput {
  connection: unknown;
}

/**
 * The wait before the next attempt once `failures` have failed (≥ 1): `firstMs · 2^(failures-1)`,
 * at most `capMs`. The ceiling: the provided delay jitters it down.
 */
export function backoffCeiling(failures: number, backoff: LinkBackoff): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 40);
  return Math.min(backoff.firstMs * 2 ** doublings, backoff.capMs);
}

/** Why an attempt ended when a rouse ended it. */
export const ROUSED_WHILE_CONNECTING = 'roused while connecting: the attempt under way was ended';

/** Why a link that did not answer a rouse was ended. */
export function silenceProblem(timings: LinkTimings): string {
  return `no answer to a ping within ${timings.livenessTimeoutMs} ms of a rouse`;
}

function problemOf(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  return String(error);
}

/**
 * The link machine. Provide the work with `linkMachine.provide({ actors: { attempt, watch,
 * check }, delays: { retryDelay }, actions: { announceLinked, announceUnlinked } })`;
 * actors/host/link/link.actor.ts does.
 */
export const linkMachine = setup({
  types: {
    context: {} as LinkContext,
    events: {} as LinkEvent,
    input: {} as LinkInput,
  },
  actors: {
    // Placeholders: the host provides the real work. Failing loudly beats linking to nothing.
    attempt: fromPromise<unknown, AttemptInput>(async () => {
      throw new Error('linkMachine: provide the `attempt` actor with linkMachine.provide({ actors: { attempt } })');
    }),
    watch: fromPromise<string, ConnectionInput>(async () => {
      throw new Error('linkMachine: provide the `watch` actor with linkMachine.provide({ actors: { watch } })');
    }),
    check: fromPromise<void, ConnectionInput>(async () => {
      throw new Error('linkMachine: provide the `check` actor with linkMachine.provide({ actors: { check } })');
    }),
  },
  delays: {
    /** The wait before the next attempt; the host provides it jittered. */
    retryDelay: ({ context }) => backoffCeiling(context.failures, context.backoff),
    attemptTimeout: ({ context }) => context.timings.attemptTimeoutMs,
    livenessTimeout: ({ context }) => context.timings.livenessTimeoutMs,
    standbyAfter: ({ context }) => context.timings.standbyAfterMs,
    settledAfter: ({ context }) => context.timings.settledAfterMs,
  },
  guards: {
    hasFailures: ({ context }) => context.failures > 0,
  },
  actions: {
    keepConnection: assign({ connection: (_, params: { connection: unknown }) => params.connection }),
    countFailure: assign({
      failures: ({ context }) => context.failures + 1,
      lastProblem: (_, params: { problem: string }) => params.problem,
    }),
    forgiveFailures: assign({ failures: 0 }),
    dropConnection: assign({ connection: null }),
    // Told to the rest of the host; no-ops until provided.
    announceLinked: () => undefined,
    announceUnlinked: () => undefined,
  },
}).createMachine({
  id: 'link',
  context: ({ input }) => ({
    backoff: { ...DEFAULT_LINK_BACKOFF, ...input.backoff },
    timings: { ...DEFAULT_LINK_TIMINGS, ...input.timings },
    failures: 0,
    connection: null,
    lastProblem: null,
  }),
  initial: 'connecting',
  states: {
    /** One attempt to reach the broker is under way. */
    connecting: {
      description: 'Probing the broker certificate and connecting, pinned, as this node.',
      invoke: {
        id: 'attempt',
        src: 'attempt',
        input: ({ context }) => ({ timeoutMs: context.timings.attemptTimeoutMs }),
        onDone: { target: 'linked', actions: { type: 'keepConnection', params: ({ event }) => ({ connection: event.output }) } },
        onError: { target: 'backingOff', actions: { type: 'countFailure', params: ({ event }) => ({ problem: problemOf(event.error) }) } },
      },
      after: {
        attemptTimeout: {
          target: 'backingOff',
          actions: { type: 'countFailure', params: ({ context }) => ({ problem: `no link within ${context.timings.attemptTimeoutMs} ms` }) },
        },
      },
      on: {
        // The attempt may be sitting on a path that no longer exists: end it. It counts as a
        // failure, so the wait that follows is the next one, not the first.
        'operator.rouse': {
          target: 'backingOff',
          actions: { type: 'countFailure', params: { problem: ROUSED_WHILE_CONNECTING } },
        },
        'host.stopping': { target: 'stopped' },
      },
    },
    /** Waiting before the next attempt. A rouse does not shorten the wait. */
    backingOff: {
      description: 'Waiting the retry delay (exponential, jittered, capped) before the next attempt.',
      after: {
        retryDelay: { target: 'connecting' },
      },
      on: {
        // Named so the rule is visible and tested: a rouse here is taken and changes nothing.
        'operator.rouse': {},
        'host.stopping': { target: 'stopped' },
      },
    },
    /** A working connection. Leaving this state closes it. */
    linked: {
      description: 'Connected to the broker; the watch ends when the connection closes or its pings go unanswered.',
      entry: 'announceLinked',
      exit: ['announceUnlinked', 'dropConnection'],
      invoke: {
        id: 'watch',
        src: 'watch',
        input: ({ context }) => ({ connection: context.connection }),
        onDone: { target: 'backingOff', actions: { type: 'countFailure', params: ({ event }) => ({ problem: event.output }) } },
      },
      on: {
        'host.stopping': { target: 'stopped' },
      },
      initial: 'steady',
      states: {
        /** Nothing in doubt. Holding here for `settledAfterMs` forgives the failures before. */
        steady: {
          after: {
            settledAfter: { guard: 'hasFailures', actions: 'forgiveFailures' },
          },
          on: { 'operator.rouse': { target: 'verifying' } },
        },
        /** Roused: a ping is out, and the link is ended if it stays unanswered. */
        verifying: {
          description: 'A ping is out; a rouse meanwhile is absorbed.',
          invoke: {
            id: 'check',
            src: 'check',
            input: ({ context }) => ({ connection: context.connection }),
            onDone: { target: 'steady' },
          },
          after: {
            livenessTimeout: {
              target: '#link.backingOff',
              actions: { type: 'countFailure', params: ({ context }) => ({ problem: silenceProblem(context.timings) }) },
            },
          },
          on: {
            // Two rouses at once are one.
            'operator.rouse': {},
          },
          initial: 'waiting',
          states: {
            /** The ping has had less than `standbyAfterMs`. */
            waiting: {
              after: { standbyAfter: { target: 'racing' } },
            },
            /** No answer yet: a new connection is tried beside the old one. */
            racing: {
              invoke: {
                id: 'standby',
                src: 'attempt',
                input: ({ context }) => ({ timeoutMs: context.timings.attemptTimeoutMs }),
                onDone: {
                  target: '#link.linked',
                  reenter: true,
                  actions: { type: 'keepConnection', params: ({ event }) => ({ connection: event.output }) },
                },
                onError: {
                  target: 'alone',
                  actions: { type: 'countFailure', params: ({ event }) => ({ problem: problemOf(event.error) }) },
                },
              },
            },
            /** The new connection failed; the old one has until the liveness timeout. */
            alone: {},
          },
        },
      },
    },
    /** The host is stopping: nothing is attempted and the connection is closed. */
    stopped: {
      type: 'final',
    },
  },
});
