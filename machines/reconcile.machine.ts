import { assign, fromPromise, setup } from 'xstate';

/**
 * Why a reconcile pass runs (the seed's trigger table). `declaration` is how a change lands;
 * `start` and `reconnect` because the machine or the mesh may have moved while nothing looked;
 * `drift` is the ten-minute timer, which looks for change the mesh did not make.
 */
export type ReconcileReason = 'declaration' | 'start' | 'reconnect' | 'drift';

/** Events the reconcile machine accepts. A pass's end arrives as `xstate.done.actor.pass` / `xstate.error.actor.pass`. */
export type ReconcileEvent =
  /** A verified declaration was stored; apply it. */
  | { type: 'declaration.arrived' }
  /** The host process started. */
  | { type: 'host.started' }
  /** The link reached the broker again after being away. */
  | { type: 'link.restored' }
  /** The host is shutting down: stop between resources, never mid-way through one. */
  | { type: 'host.stopping' };

/** What one pass is asked to do: every reason that asked for it since the last pass began. */
export interface PassInput {
  reasons: ReconcileReason[];
}

/** What the reconcile machine remembers. */
export interface ReconcileContext {
  /** Reasons that arrived while a pass ran: they coalesce into exactly one more pass. */
  pending: ReconcileReason[];
  /** Reasons the running pass was started for. */
  running: ReconcileReason[];
  /** Passes completed (successfully or not) since the host started. */
  passes: number;
  /** Why the last pass failed as a whole, or null when it finished. */
  lastError: string | null;
}

const TRIGGERS: Record<string, ReconcileReason> = {
  'declaration.arrived': 'declaration',
  'host.started': 'start',
  'link.restored': 'reconnect',
};

function reasonOf(event: { type: string }): ReconcileReason {
  return TRIGGERS[event.type] ?? 'drift';
}

function withReason(reasons: ReconcileReason[], reason: ReconcileReason): ReconcileReason[] {
  return reasons.includes(reason) ? reasons : [...reasons, reason];
}

/** The default drift period: ten minutes. */
export const DRIFT_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Reconcile: one apply at a time. Any trigger while a pass runs is remembered, and however many
 * arrive they make exactly one more pass when the current one ends. The drift timer runs only
 * while idle, so a host that is busy applying is not also asked to look for drift.
 */
export const reconcileMachine = setup({
  types: {
    context: {} as ReconcileContext,
    events: {} as ReconcileEvent,
  },
  actors: {
    // Provided by actors/host/reconcile/reconcile.actor.ts: converge the machine to the store.
    pass: fromPromise<void, PassInput>(async () => {
      throw new Error('reconcileMachine: provide the `pass` actor with machine.provide({ actors: { pass } })');
    }),
  },
  delays: {
    driftInterval: DRIFT_INTERVAL_MS,
  },
  actions: {
    startFromEvent: assign(({ event }) => ({ running: [reasonOf(event)] })),
    remember: assign(({ context, event }) => ({ pending: withReason(context.pending, reasonOf(event)) })),
    startPending: assign(({ context }) => ({ running: context.pending, pending: [] })),
    finishPass: assign(({ context }) => ({ passes: context.passes + 1, lastError: null })),
    failPass: assign(({ context, event }) => ({
      passes: context.passes + 1,
      lastError: 'error' in event && event.error instanceof Error ? event.error.message : String('error' in event ? event.error : 'unknown'),
    })),
  },
  guards: {
    hasPending: ({ context }) => context.pending.length > 0,
  },
}).createMachine({
  id: 'reconcile',
  context: { pending: [], running: [], passes: 0, lastError: null },
  initial: 'idle',
  states: {
    /** Nothing to apply. Waits for a trigger, or the drift period to pass. */
    idle: {
      description: 'Waiting for a declaration, a start, a reconnect, or the drift timer.',
      on: {
        'declaration.arrived': { target: 'applying', actions: 'startFromEvent' },
        'host.started': { target: 'applying', actions: 'startFromEvent' },
        'link.restored': { target: 'applying', actions: 'startFromEvent' },
        'host.stopping': { target: 'stopped' },
      },
      after: {
        driftInterval: { target: 'applying', actions: assign({ running: ['drift'] as ReconcileReason[] }) },
      },
    },
    /** One pass: converge the machine to the store, then report. Triggers meanwhile are coalesced. */
    applying: {
      description: 'Converging the machine to the store, one resource at a time.',
      invoke: {
        id: 'pass',
        src: 'pass',
        input: ({ context }) => ({ reasons: context.running }),
        onDone: [
          { guard: 'hasPending', target: 'applying', reenter: true, actions: ['finishPass', 'startPending'] },
          { target: 'idle', actions: 'finishPass' },
        ],
        onError: [
          { guard: 'hasPending', target: 'applying', reenter: true, actions: ['failPass', 'startPending'] },
          { target: 'idle', actions: 'failPass' },
        ],
      },
      on: {
        'declaration.arrived': { actions: 'remember' },
        'host.started': { actions: 'remember' },
        'link.restored': { actions: 'remember' },
        // Leaving the state aborts the pass's signal: converge stops between resources.
        'host.stopping': { target: 'stopped' },
      },
    },
    /** The host is shutting down; nothing more is applied. */
    stopped: {
      description: 'The host is shutting down.',
      type: 'final',
    },
  },
});
