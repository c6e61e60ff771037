import { assertEvent, assign, fromCallback, fromPromise, setup, spawnChild, stopChild } from 'xstate';
import { DRIFT_INTERVAL_MS } from './reconcile.machine';

/**
 * The name a node is known by once enrolled. The keys behind it stay in the host's store and
 * never enter the machine.
 */
export interface LifecycleIdentity {
  node: string;
}

/**
 * Why an enrolment was refused or a release did not finish, kept so the person who asked can
 * be told (`TokenNotAccepted`, `FingerprintMismatch`, `ApplyFailed`, …).
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
  /** Release attempts made for the final declaration the host holds. */
  releaseAttempts: number;
  /**
   * The host holds a final declaration in its store: a release is under way, through failed
   * attempts and lost links, until the host has reported and dropped its identity.
   */
  finalDeclarationHeld: boolean;
}

/** Input to the lifecycle machine: nothing yet; the retry wait is a provided delay. */
export type LifecycleInput = Record<string, never>;

/**
 * Events the lifecycle accepts. `operator.*` is what a person did; the rest are facts reported
 * by the host's other parts. The outcomes of the invoked work arrive as
 * `xstate.done.actor.enrol` / `xstate.error.actor.enrol`, `xstate.done.actor.identity` (the
 * running host found an identity in its store) and `xstate.done.actor.release` /
 * `xstate.error.actor.release`, and the retry wait as
 * `xstate.after.releaseRetryDelay.lifecycle.enrolled.retrying`.
 */
export type LifecycleEvent =
  /** The package manager installed the host and the init started it. */
  | { type: 'operator.install' }
  /** `nox-mesh-host enrol --token <token>`. The token is passed to the enrol actor, never kept. */
  | { type: 'operator.enrol'; token: string }
  /** The link lost the broker. */
  | { type: 'link.lost' }
  /** The link reached the broker again. */
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

/**
 * How long a failed release waits before the next attempt, unless provided: the host tries again
 * at its next reconcile pass, which the drift timer brings at the latest.
 */
export const DEFAULT_RELEASE_RETRY_DELAY_MS = DRIFT_INTERVAL_MS;

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
 * The host provides the work with `lifecycleMachine.provide({ actors: { identity, node, release } })`
 * (and `delays.releaseRetryDelay`); actors/host/run/host-lifecycle.actor.ts is that actor, the
 * child of the host's root supervisor. `nox-mesh-host run` starting is `operator.install`. The
 * enrolment itself runs in its own process (`nox-mesh-host enrol`, the `enrol` actor); the running
 * host, `hosted`, watches its store (`identity`) and becomes the node once an identity is there,
 * which is also how a host that restarts resumes: it does not walk the path again. Becoming the
 * node spawns the node's work (`node`: the link, the declaration intake, the heartbeats and
 * reconcile, under a supervisor of their own), which lives through `enrolled` and `disconnected`
 * alike and is stopped when the release has finished. A host that starts without a link, or a
 * held final declaration, is told so by its node's work (`link.lost`, `declaration.final`).
 *
 * A release is not given up: what the host made stays its own until it is removed, so a failed
 * removal is tried again at every later pass, however it failed, and reported each time for a
 * person to look at. Losing the link does not end a release either: the final declaration is
 * in the store, and the release finishes once the link is back to carry its report.
 *
 * A node that is gone for good (stolen, dead) is never released here: a final declaration
 * arrives only over the link, so such a node is revoked at the controller (`mesh-control node
 * revoke`), the broker and the providers, and keeps holding its machine in the last state it
 * was told. Its host, if it still runs, is `disconnected`: once the broker has refused its
 * credentials for a while it winds its node's work down and lets go of its store, so the
 * machine can be enrolled again beside it, and takes up the new identity with a new tree (not a
 * transition here: the revoked identity is never this machine's again, and the store keeps it
 * until `enrol` replaces it).
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
    // Unprovided, a machine with no store: nothing ever appears in it, and there is no node's work.
    identity: fromPromise<LifecycleIdentity>(() => new Promise<never>(() => undefined)),
    node: fromCallback(() => undefined),
  },
  delays: {
    releaseRetryDelay: DEFAULT_RELEASE_RETRY_DELAY_MS,
  },
  guards: {
    holdsFinalDeclaration: ({ context }) => context.finalDeclarationHeld,
  },
  actions: {
    forgetEnrolRefusal: assign({ enrolRefusal: null }),
    recordEnrolRefusal: assign({
      enrolRefusal: ({ event }) => setbackFrom('error' in event ? event.error : undefined),
    }),
    adoptIdentity: assign({
      identity: ({ event }) => ('output' in event ? (event.output as LifecycleIdentity) : null),
    }),
    startRelease: assign({ releaseFailure: null, releaseAttempts: 0, finalDeclarationHeld: true }),
    countReleaseAttempt: assign({ releaseAttempts: ({ context }) => context.releaseAttempts + 1 }),
    recordReleaseFailure: assign({
      releaseFailure: ({ event }) => setbackFrom('error' in event ? event.error : undefined),
    }),
    dropIdentity: assign({ identity: null, releaseFailure: null, releaseAttempts: 0, finalDeclarationHeld: false }),
    startNode: spawnChild('node', { id: 'node' }),
    stopNode: stopChild('node'),
  },
}).createMachine({
  id: 'lifecycle',
  description: 'How a Linux machine becomes a node, stays one, and stops being one.',
  initial: 'unmanaged',
  context: {
    identity: null,
    enrolRefusal: null,
    releaseFailure: null,
    releaseAttempts: 0,
    finalDeclarationHeld: false,
  },
  states: {
    unmanaged: {
      description: 'Has nothing of ours. Can nothing for the mesh: it is a Linux machine.',
      on: {
        'operator.install': { target: 'hosted' },
      },
    },
    // Not a node: nobody to link to and nothing pushed to apply.
    // The running host watches its store: an enrolment made beside it, or the identity it held
    // when it started, makes it the node.
    hosted: {
      description: 'Has the host, no identity. Can apply a local file or its bundle, answer profile, inventory and version. Not a node.',
      invoke: {
        id: 'identity',
        src: 'identity',
        // An enrolment refused earlier is past: this machine is a node now.
        onDone: { target: 'enrolled', actions: ['forgetEnrolRefusal', 'adoptIdentity', 'startNode'] },
      },
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
        onDone: { target: 'enrolled', actions: ['adoptIdentity', 'startNode'] },
        onError: { target: 'hosted', actions: 'recordEnrolRefusal' },
      },
    },
    enrolled: {
      description: 'Has identity, link and store. Can everything: this is a node.',
      initial: 'operating',
      on: {
        // A release under way stops here: its report needs the link. The final declaration
        // stays in the store, so it is not lost with the link.
        'link.lost': { target: 'disconnected' },
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
            onDone: { target: '#lifecycle.hosted', actions: ['stopNode', 'dropIdentity'] },
            // Whatever failed is reported, and tried again: a locked package database passes by
            // itself, and a removal the machine refused passes once a person has looked.
            onError: { target: 'retrying', actions: 'recordReleaseFailure' },
          },
        },
        retrying: {
          description: 'A release left something behind, and reported what. Keeps its identity, so it can still be asked, and tries again at its next pass.',
          after: {
            releaseRetryDelay: { target: 'releasing' },
          },
          // Asked again (`mesh-control node release` once more, after a person cleared the way):
          // it tries at once rather than at its next pass.
          on: {
            'declaration.final': { target: 'releasing' },
          },
        },
      },
    },
    // Not a failure, not degraded: a situation. It cannot receive declarations, so a release
    // cannot start here; one already under way goes on once the link is back.
    disconnected: {
      description: 'Has identity and store, no link: the same node, away. Can hold its machine in the last state it was told, reconciling against its store. The controller shows it so after three missed heartbeats of its kind, and enrolled at the next.',
      on: {
        'link.restored': [
          { guard: 'holdsFinalDeclaration', target: 'enrolled.releasing' },
          { target: 'enrolled' },
        ],
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
