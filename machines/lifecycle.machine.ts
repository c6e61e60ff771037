import { and, assertEvent, assign, fromPromise, setup } from 'xstate';

/**
 * The name a node is known by once enrolled. The keys behind it stay in the host's store and
 * never enter the machine.
 */
export interface LifecycleIdentity {
  node: string;
}

/**
 * Why an enrolment was refused or a release did not finish, kept so the person who asked can
 * be told (`TokenExpired`, `FingerprintMismatch`, `PackageDatabaseLocked`, …).
 */
export interface LifecycleSetback {
  /** The condition's name: the OperatorError subclass that the actor threw. */
  condition: string;
  /** What happened, as the actor said it. */
  message: string;
  /** True when the same request may succeed later without anything changing here. */
  retryable: boolean;
}

/** What the lifecycle remembers between states. */
export interface LifecycleContext {
  /** Set from enrolment until release: only a machine with an identity is a node. */
  identity: LifecycleIdentity | null;
  /** The last enrolment refusal; cleared when the next enrolment starts. */
  enrolRefusal: LifecycleSetback | null;
  /** The last release failure; cleared when the next final declaration arrives. */
  releaseFailure: LifecycleSetback | null;
  /** Release attempts made for the final declaration being applied. */
  releaseAttempts: number;
  /** How many attempts a retryable release failure gets before the node reports it and waits. */
  maxReleaseAttempts: number;
}

/** Input to the lifecycle machine. */
export interface LifecycleInput {
  /** Attempts a retryable release failure gets (default 3). */
  maxReleaseAttempts?: number;
}

/**
 * Events the lifecycle accepts. `operator.*` is what a person did; the rest are facts reported
 * by the host's other parts. The outcomes of the invoked work arrive as
 * `xstate.done.actor.enrol` / `xstate.error.actor.enrol` and `xstate.done.actor.release` /
 * `xstate.error.actor.release`, and the retry wait as
 * `xstate.after.releaseRetryDelay.lifecycle.enrolled.retrying`.
 */
export type LifecycleEvent =
  /** The package manager installed the host and the init started it. */
  | { type: 'operator.install' }
  /** `nox-mesh-host enrol --token <token>`. The token is passed to the enrol actor, never kept. */
  | { type: 'operator.enrol'; token: string }
  /** The link machine lost the broker. */
  | { type: 'link.lost' }
  /** The link machine reached the broker again. */
  | { type: 'link.restored' }
  /** A verified declaration of kind `final` arrived: the controller released this node. */
  | { type: 'declaration.final' };

/** What the enrol actor is given: the one-time token exactly as the person typed it. */
export interface EnrolInput {
  token: string;
}

/** What the release actor is given: the node being retired. */
export interface ReleaseInput {
  node: string;
}

/** How long a retryable release failure waits before the next attempt, unless provided. */
export const DEFAULT_RELEASE_RETRY_DELAY_MS = 30_000;

const DEFAULT_MAX_RELEASE_ATTEMPTS = 3;

/**
 * How a Linux machine becomes a node, stays one, and stops being one (the node lifecycle):
 *
 * ```
 * unmanaged ──install──► hosted ──enrol──► enrolled ⇄ disconnected
 *                          ▲                  │
 *                          └─────release──────┘
 * ```
 *
 * Only `enrolled` and `disconnected` are nodes, and they are the same node in two situations;
 * `hosted` is a machine with the host on it that has not been told which mesh it belongs to.
 *
 * The host provides the work with `lifecycleMachine.provide({ actors: { enrol, release } })`
 * (and may provide `delays.releaseRetryDelay`). A host that restarts does not walk the path
 * again: it resumes from its store with
 * `createActor(machine, { input, snapshot: machine.resolveState({ value: 'disconnected', context }) })`
 * when the store holds an identity (it has no link yet), and from `hosted` otherwise.
 *
 * A node that is gone for good (stolen, dead) is never released here: a final declaration
 * arrives only over the link, so such a node is revoked at the controller, the broker and the
 * providers, and keeps holding its machine in the last state it was told.
 */
export const lifecycleMachine = setup({
  types: {
    context: {} as LifecycleContext,
    events: {} as LifecycleEvent,
    input: {} as LifecycleInput,
  },
  actors: {
    enrol: fromPromise<LifecycleIdentity, EnrolInput>(async () => {
      throw new Error('lifecycle: provide the enrol actor with lifecycleMachine.provide({ actors: { enrol } })');
    }),
    release: fromPromise<void, ReleaseInput>(async () => {
      throw new Error('lifecycle: provide the release actor with lifecycleMachine.provide({ actors: { release } })');
    }),
  },
  delays: {
    releaseRetryDelay: DEFAULT_RELEASE_RETRY_DELAY_MS,
  },
  guards: {
    isRetryable: ({ event }) => 'error' in event && setbackFrom(event.error).retryable,
    hasAttemptsLeft: ({ context }) => context.releaseAttempts < context.maxReleaseAttempts,
  },
  actions: {
    forgetEnrolRefusal: assign({ enrolRefusal: null }),
    recordEnrolRefusal: assign({
      enrolRefusal: ({ event }) => setbackFrom('error' in event ? event.error : undefined),
    }),
    adoptIdentity: assign({
      identity: ({ event }) => ('output' in event ? (event.output as LifecycleIdentity) : null),
    }),
    startRelease: assign({ releaseFailure: null, releaseAttempts: 0 }),
    countReleaseAttempt: assign({ releaseAttempts: ({ context }) => context.releaseAttempts + 1 }),
    recordReleaseFailure: assign({
      releaseFailure: ({ event }) => setbackFrom('error' in event ? event.error : undefined),
    }),
    endRelease: assign({ releaseAttempts: 0 }),
    dropIdentity: assign({ identity: null, releaseFailure: null, releaseAttempts: 0 }),
  },
}).createMachine({
  id: 'lifecycle',
  description: 'How a Linux machine becomes a node, stays one, and stops being one.',
  initial: 'unmanaged',
  context: ({ input }) => ({
    identity: null,
    enrolRefusal: null,
    releaseFailure: null,
    releaseAttempts: 0,
    maxReleaseAttempts: input.maxReleaseAttempts ?? DEFAULT_MAX_RELEASE_ATTEMPTS,
  }),
  states: {
    unmanaged: {
      description: 'Has nothing of ours. Can nothing for the mesh: it is a Linux machine.',
      on: {
        'operator.install': { target: 'hosted' },
      },
    },
    // Not a node: nobody to link to and nothing pushed to apply.
    hosted: {
      description: 'Has the host, no identity. Can apply a local file or its bundle, answer profile, inventory and version. Not a node.',
      on: {
        'operator.enrol': { target: 'enrolling', actions: 'forgetEnrolRefusal' },
      },
    },
    // A refusal goes back to hosted with the reason kept, so the person who typed the token
    // is told why and can fix it, or get a new one, and enrol again.
    enrolling: {
      description: 'Has the host, no identity yet. Presents the token: checks the broker against the pinned fingerprint before sending anything, then the secret, its public key, profile and inventory.',
      invoke: {
        id: 'enrol',
        src: 'enrol',
        input: ({ event }) => {
          assertEvent(event, 'operator.enrol');
          return { token: event.token };
        },
        onDone: { target: 'enrolled', actions: 'adoptIdentity' },
        onError: { target: 'hosted', actions: 'recordEnrolRefusal' },
      },
    },
    enrolled: {
      description: 'Has identity, link and store. Can everything: this is a node.',
      initial: 'operating',
      on: {
        // Losing the link also ends a release under way: its report needs the link, and the
        // final declaration is delivered again when the link returns.
        'link.lost': { target: 'disconnected', actions: 'endRelease' },
      },
      states: {
        operating: {
          description: 'Applies what the controller pushes, reads back and reports; reconciles on a timer; sends heartbeats.',
          on: {
            'declaration.final': { target: 'releasing', actions: 'startRelease' },
          },
        },
        // Removal is not symmetric: what the host made goes, what it configured stays.
        releasing: {
          description: 'A final declaration named nothing: removes files, directories and containers, stops services, forgets packages and actions, reports, drops its identity.',
          entry: 'countReleaseAttempt',
          invoke: {
            id: 'release',
            src: 'release',
            input: ({ context }) => ({ node: context.identity?.node ?? '' }),
            onDone: { target: '#lifecycle.hosted', actions: 'dropIdentity' },
            onError: [
              {
                guard: and(['isRetryable', 'hasAttemptsLeft']),
                target: 'retrying',
                actions: 'recordReleaseFailure',
              },
              { target: 'operating', actions: ['recordReleaseFailure', 'endRelease'] },
            ],
          },
        },
        // A locked package database passes by itself; a removal the machine refuses does not,
        // and is reported instead so a person can look.
        retrying: {
          description: 'A release stopped on something that may pass by itself (a locked package database). Tries again after a wait.',
          after: {
            releaseRetryDelay: { target: 'releasing' },
          },
        },
      },
    },
    // Not a failure, not degraded: a situation. It cannot receive declarations, so it cannot be
    // released from here.
    disconnected: {
      description: 'Has identity and store, no link: the same node, away. Can hold its machine in the last state it was told, reconciling against its store.',
      on: {
        'link.restored': { target: 'enrolled' },
      },
    },
  },
});

/**
 * Reads what a failed actor threw into plain data. Actors throw OperatorError subclasses, whose
 * class name is the condition; anything else is kept as what it says, and never retryable.
 */
function setbackFrom(error: unknown): LifecycleSetback {
  if (typeof error === 'object' && error !== null) {
    const { name, message, retryable } = error as { name?: unknown; message?: unknown; retryable?: unknown };
    return {
      condition: typeof name === 'string' && name !== '' ? name : 'Error',
      message: typeof message === 'string' ? message : String(error),
      retryable: retryable === true,
    };
  }
  return { condition: 'Error', message: String(error), retryable: false };
}
