import { assign, fromPromise, setup } from 'xstate';

// One supervised child slot, Erlang/OTP one-for-one style: the slot runs one incarnation of its
// child at a time, restarts it after a growing delay when it fails, and gives up (escalates) when
// it would have to restart it more than `maxRestarts` times within `windowMs`.
//
// An errored XState actor is never revived, so a restart is a fresh invoke: leaving `running` for
// `backingOff` stops the dead incarnation, and coming back into `running` invokes a new one.
//
// What a normal exit means is the child's restart policy, as in OTP, and it is decided here: a
// `permanent` child must always run (a daemon, a link), so its normal exit is restarted like a
// failure, recorded as "exited although it is permanent"; a `transient` child's normal exit is the
// end of its work (a migration, a one-off sync), and only its failures are restarted. The policy
// is in the slot's input, so the model's paths are walked once per policy (model-tests/
// supervisor*.model.test.ts): every branch is reachable from one of the two initial snapshots.
// One thing is decided before the event reaches this machine, by the helper that builds
// supervisors (actors/shared/supervisor): a nested supervisor that gave up ends with an
// escalation report, which the helper turns into an error, so it is a failure under either
// policy.
//
// Time without a clock: the window is measured by the actor system's clock through one named
// delay per state, never by reading the time. Restarts are counted until the child has stayed up
// for `windowMs` without failing (the delay `restartWindow` in `running`); then they are forgiven
// and the backoff starts again from its base, the way a crash-looping pod's backoff is reset once
// it has run cleanly for a while. More than `maxRestarts` failures inside any `windowMs` therefore
// always escalate, and a child that fails less often than once per `windowMs` of running never
// does. A sliding window over failure times would need a timer per failure running alongside the
// backoff, and which of those fires first is not something the machine's graph can say, so its
// paths could not all be driven; here every state has at most one timer, and the graph is exact.

/**
 * What a normal exit of a child means. `permanent`: the child must always run, so a normal exit is
 * a failure and it is restarted. `transient`: a normal exit is the end of its work; only a failure
 * is restarted.
 */
export type RestartPolicy = 'permanent' | 'transient';

/** The failure recorded when a permanent child exits normally. */
export const PERMANENT_CHILD_EXITED = 'exited although it is permanent';

/** Exponential backoff between restarts: `baseMs`, then doubling, never more than `maxMs`. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** What a slot is started with: the child's name and the limits. */
export interface SupervisorInput {
  /** The child's name as the operator sees it (the tree, the escalation message). */
  child: string;
  /** Whether the child's normal exit is restarted (`permanent`) or ends the slot (`transient`). */
  restart: RestartPolicy;
  /** Restarts allowed within the window; one more escalates. 0 escalates on the first failure. */
  maxRestarts: number;
  /** How long the child must stay up for its earlier restarts to be forgiven. */
  windowMs: number;
  backoff: BackoffPolicy;
  /**
   * Handed unchanged to every incarnation of the child. Whatever must survive a restart lives
   * here, above the child, because the child itself is thrown away on every failure.
   */
  childInput?: unknown;
}

/** The slot's memory: its limits, and the restarts and error that still count. */
export interface SupervisorContext {
  child: string;
  restart: RestartPolicy;
  maxRestarts: number;
  windowMs: number;
  backoff: BackoffPolicy;
  childInput: unknown;
  /** Restarts since the child last stayed up for `windowMs`; never more than `maxRestarts`. */
  recentRestarts: number;
  /** The message of the child's most recent failure, kept for the tree and the escalation. */
  lastError: string | undefined;
}

/** The slot gave up on its child: what the parent (or the root) is told. */
export interface EscalationReport {
  outcome: 'escalated';
  /** The child that failed too often. */
  child: string;
  /** Its last error message. */
  error: string;
  maxRestarts: number;
  windowMs: number;
}

/** How a slot ends: its child was stopped or ended its work, or the slot escalated. */
export type SupervisorOutput = { outcome: 'stopped'; child: string } | EscalationReport;

/** The one command a slot takes: stop the child cleanly and do not restart it. */
export interface SupervisorEvent {
  type: 'supervisor.stop';
}

/**
 * The delay before the n-th restart within the window (n ≥ 1): `baseMs · 2^(n-1)`, capped at
 * `maxMs`. Pure, so tests can state the schedule directly.
 */
export function restartDelay(backoff: BackoffPolicy, recentRestarts: number): number {
  const doublings = Math.max(0, recentRestarts - 1);
  // 2^doublings overflows to Infinity long before it matters; min() caps it either way.
  return Math.min(backoff.baseMs * 2 ** doublings, backoff.maxMs);
}

/** True when a value is a slot's escalation report (the output of a supervisor that gave up). */
export function isEscalationReport(output: unknown): output is EscalationReport {
  if (typeof output !== 'object' || output === null) return false;
  const report = output as Partial<Record<keyof EscalationReport, unknown>>;
  return report.outcome === 'escalated' && typeof report.child === 'string' && typeof report.error === 'string'
    && typeof report.maxRestarts === 'number' && typeof report.windowMs === 'number';
}

/** The limit a report says was passed, as messages put it: `more than 3 restarts in 60000 ms`. */
export function limitText(report: Pick<EscalationReport, 'maxRestarts' | 'windowMs'>): string {
  return `more than ${report.maxRestarts} restart${report.maxRestarts === 1 ? '' : 's'} in ${report.windowMs} ms`;
}

/** The message recorded for a failure: an Error's message, or the thrown value as text. */
export function failureMessage(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * One supervised child slot. Provide the child with
 * `supervisorMachine.provide({ actors: { child: logic } })`; the helper in
 * actors/shared/supervisor does this for every child of a supervisor.
 */
export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorInput,
    output: {} as SupervisorOutput,
  },
  actors: {
    // A placeholder: the real child is provided per slot. Failing loudly beats running nothing.
    child: fromPromise<unknown, unknown>(() =>
      Promise.reject(new Error('supervisor has no child: provide one with supervisorMachine.provide({ actors: { child } })'))),
  },
  delays: {
    /** The wait before the next incarnation, from the restarts now counted. */
    restartDelay: ({ context }) => restartDelay(context.backoff, context.recentRestarts),
    /** How long the child must stay up for its restarts to be forgiven. */
    restartWindow: ({ context }) => context.windowMs,
  },
  guards: {
    /** One more restart would be more than the window allows. */
    wouldExceedRestartLimit: ({ context }) => context.recentRestarts + 1 > context.maxRestarts,
    hasRecentRestarts: ({ context }) => context.recentRestarts > 0,
    /** A normal exit is the end of this child's work. */
    isTransient: ({ context }) => context.restart === 'transient',
  },
  actions: {
    recordError: assign({
      lastError: (_, params: { error: unknown }) => failureMessage(params.error),
    }),
    countRestart: assign({ recentRestarts: ({ context }) => context.recentRestarts + 1 }),
    forgiveRestarts: assign({ recentRestarts: 0 }),
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({
    child: input.child,
    restart: input.restart,
    maxRestarts: input.maxRestarts,
    windowMs: input.windowMs,
    backoff: input.backoff,
    childInput: input.childInput,
    recentRestarts: 0,
    lastError: undefined,
  }),
  initial: 'running',
  // `supervisor.stop` is accepted where the slot is alive, not on the root: a slot that has
  // ended takes no more events, and the model should not say otherwise.
  states: {
    /**
     * One incarnation of the child is alive. Leaving this state stops it (its cleanup runs).
     * Staying here for `windowMs` forgives the restarts counted so far.
     */
    running: {
      invoke: {
        id: 'child',
        src: 'child',
        input: ({ context }: { context: SupervisorContext }) => context.childInput,
        onError: [
          {
            guard: 'wouldExceedRestartLimit',
            target: 'escalated',
            actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
          },
          {
            target: 'backingOff',
            actions: [{ type: 'recordError', params: ({ event }) => ({ error: event.error }) }, 'countRestart'],
          },
        ],
        // A normal exit: the end of a transient child's work, a failure of a permanent one.
        onDone: [
          { guard: 'isTransient', target: 'stopped' },
          {
            guard: 'wouldExceedRestartLimit',
            target: 'escalated',
            actions: { type: 'recordError', params: { error: PERMANENT_CHILD_EXITED } },
          },
          {
            target: 'backingOff',
            actions: [{ type: 'recordError', params: { error: PERMANENT_CHILD_EXITED } }, 'countRestart'],
          },
        ],
      },
      after: {
        restartWindow: { guard: 'hasRecentRestarts', actions: 'forgiveRestarts' },
      },
      on: { 'supervisor.stop': { target: 'stopped' } },
    },
    /** The child is down; a fresh incarnation starts when the restart delay has passed. */
    backingOff: {
      after: {
        restartDelay: { target: 'running' },
      },
      on: { 'supervisor.stop': { target: 'stopped' } },
    },
    /** The child failed more than `maxRestarts` times within the window: this slot gave up on it. */
    escalated: {
      type: 'final',
      output: ({ context }): EscalationReport => ({
        outcome: 'escalated',
        child: context.child,
        // Only a failure leads here, and every failure records its message.
        error: context.lastError ?? 'unknown failure',
        maxRestarts: context.maxRestarts,
        windowMs: context.windowMs,
      }),
    },
    /** The child was stopped on request, or (transient) ended its work: nothing runs here any more. */
    stopped: {
      type: 'final',
      output: ({ context }) => ({ outcome: 'stopped', child: context.child }),
    },
  },
  // The final state that was reached says what happened; the slot's output is its output.
  output: ({ event }) => (event as unknown as { output: SupervisorOutput }).output,
});
