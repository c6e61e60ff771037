import { assign, fromPromise, setup } from 'xstate';
import type { UpgradePolicy } from '../schema/module';

// A plan: the staged rollout of one new module revision to the nodes running an older one.
//
// Under `one-first` the first machine (the first by name among those heard from lately) is sent
// the revision alone, and the rest follow only once that machine's report on the send says it
// applied. A first machine whose report says it failed, or that says nothing within the wait,
// stops the plan and the note names it; a person retries (the first machine is sent again) or
// closes it. Under `together` every node is sent at once. Under `record` nothing is sent: the
// plan is held until pushes (`mesh-control push NODE`, or the whole mesh) have sent it to every
// node, and meanwhile it says who is still behind.
//
// A newer revision of the same module opens a newer plan, which takes in every node this one
// had not sent, and this one ends as superseded. A person may close any plan that has not
// ended. A controller that takes over (after a restart or a failover) carries on each open plan
// from the state the store holds: re-entering the state starts its send or its wait again, and
// the send is skipped for a node whose last declaration already carries the revision.
//
// Sends never throw to the machine: each node comes back sent, failed (with why) or skipped
// (with why: no longer assigned, moved on to a newer revision, being released), so a partial
// failure keeps what did go out.

/** One declaration a plan sent (or a push sent, carrying the plan's revision). */
export interface PlanSend {
  generation: number;
  /** SHA-256 of the signed payload, as the node's report quotes it. */
  digest: string;
  /** When it was sent, ISO 8601 (the controller's clock, carried as data). */
  at: string;
}

/** What sending to some nodes came to, node by node. */
export interface SendOutcome {
  sent: Record<string, PlanSend>;
  failed: Record<string, string>;
  skipped: Record<string, string>;
}

/** What a plan remembers; kept whole in the store after every step. */
export interface PlanContext {
  policy: UpgradePolicy;
  /** The nodes running an older revision when the plan opened, sorted by name. */
  targets: string[];
  /** The first machine under `one-first`; null otherwise. */
  first: string | null;
  /** Nodes sent the revision (by the plan, or by a push naming them), with what was sent. */
  sent: Record<string, PlanSend>;
  /** Nodes the plan will not send, and why. */
  skipped: Record<string, string>;
  /** The last failed send to each node, and why; cleared for a node once it is sent. */
  failed: Record<string, string>;
  /** True once the first machine's report said it applied. */
  firstApplied: boolean;
  /**
   * True when a person retried the plan at its first machine: that machine is sent the revision
   * again even if its last declaration carries it, so it applies it again and reports anew.
   */
  resendFirst: boolean;
  /** Why the plan stopped or ended; null while it goes on normally. */
  note: string | null;
  /** The plan that took this one's place. */
  supersededBy: number | null;
}

/** Events the plan machine accepts. Sends end as `xstate.done.actor.sendFirst` / `sendRest`. */
export type PlanEvent =
  /** The plan was opened for a new revision: the policy, the nodes behind, the first machine. */
  | { type: 'plan.opened'; policy: UpgradePolicy; targets: string[]; first: string | null }
  /** The first machine's report after the send says the declaration applied. */
  | { type: 'first.applied' }
  /** The first machine's report after the send says something failed (or it refused it). */
  | { type: 'first.failed'; reason: string }
  /** A push sent these nodes the revision (or a newer one), outside the plan's own sends. */
  | { type: 'nodes.pushed'; sent: Record<string, PlanSend> }
  /** A person closed the plan (`mesh-control plans close ID`). */
  | { type: 'operator.close' }
  /** A person asked a stopped plan to go on (`mesh-control plans retry ID`). */
  | { type: 'operator.retry' }
  /** A newer plan for the same module took this one's place. */
  | { type: 'plan.superseded'; by: number }
  /** A controller took the plan up again from the store: the state's work starts again. */
  | { type: 'controller.resumed' };

/** The first machine's input: whom to send, and whether to send again what it was sent already. */
export interface SendFirstInput {
  node: string;
  resend: boolean;
}

/** The others' input: whom to send. */
export interface SendRestInput {
  nodes: string[];
}

/** How long the first machine has to report on the send before the plan stops: ten minutes. */
export const FIRST_REPORT_WAIT_MS = 10 * 60 * 1000;

/** A plan's context before it opens. */
export const EMPTY_PLAN_CONTEXT: PlanContext = {
  policy: 'one-first',
  targets: [],
  first: null,
  sent: {},
  skipped: {},
  failed: {},
  firstApplied: false,
  resendFirst: false,
  note: null,
  supersededBy: null,
};

/** The nodes a plan has yet to send: neither sent nor skipped. */
export function unsentTargets(context: Pick<PlanContext, 'targets' | 'sent' | 'skipped'>): string[] {
  return context.targets.filter((node) => context.sent[node] === undefined && context.skipped[node] === undefined);
}

function withoutKeys<T>(record: Record<string, T>, keys: readonly string[]): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
}

function describeFailures(failed: Record<string, string>): string {
  return Object.entries(failed)
    .map(([node, reason]) => `${node} (${reason})`)
    .join('; ');
}

/** The plan machine. Its sends and its wait are provided by actors/controller/plans/plan.actor.ts. */
export const planMachine = setup({
  types: {
    context: {} as PlanContext,
    events: {} as PlanEvent,
  },
  actors: {
    // Provided by the plan actor: send the first machine the revision.
    sendFirst: fromPromise<SendOutcome, SendFirstInput>(async () => {
      throw new Error('planMachine: provide the `sendFirst` actor with machine.provide({ actors: { sendFirst } })');
    }),
    // Provided by the plan actor: send every node not yet sent.
    sendRest: fromPromise<SendOutcome, SendRestInput>(async () => {
      throw new Error('planMachine: provide the `sendRest` actor with machine.provide({ actors: { sendRest } })');
    }),
  },
  delays: {
    // The plan actor provides the time left since the send, so a resumed plan keeps its bound.
    firstReportWait: FIRST_REPORT_WAIT_MS,
  },
  guards: {
    isRecord: ({ event }) => event.type === 'plan.opened' && event.policy === 'record',
    isTogether: ({ event }) => event.type === 'plan.opened' && event.policy === 'together',
    wasFirstSent: ({ context, event }) =>
      'output' in event && context.first !== null && (event.output as SendOutcome).sent[context.first] !== undefined,
    hadFailures: ({ event }) => 'output' in event && Object.keys((event.output as SendOutcome).failed).length > 0,
    leavesNothingUnsent: ({ context, event }) =>
      event.type === 'nodes.pushed' && unsentTargets({ ...context, sent: { ...context.sent, ...event.sent } }).length === 0,
    needsFirst: ({ context }) => context.policy === 'one-first' && !context.firstApplied,
  },
  actions: {
    open: assign(({ event }) => {
      if (event.type !== 'plan.opened') return {};
      return { policy: event.policy, targets: [...event.targets].sort(), first: event.policy === 'one-first' ? event.first : null };
    }),
    recordSends: assign(({ context, event }) => {
      if (!('output' in event)) return {};
      const outcome = event.output as SendOutcome;
      const done = [...Object.keys(outcome.sent), ...Object.keys(outcome.skipped)];
      return {
        sent: { ...context.sent, ...outcome.sent },
        skipped: { ...context.skipped, ...outcome.skipped },
        failed: { ...withoutKeys(context.failed, done), ...outcome.failed },
        resendFirst: false,
      };
    }),
    noteFirstNotSent: assign(({ context, event }) => {
      const first = context.first ?? '(none)';
      const outcome = 'output' in event ? (event.output as SendOutcome) : undefined;
      const why = outcome?.failed[first] ?? outcome?.skipped[first] ?? 'no reason given';
      return { note: `the first machine, ${first}, could not be sent the revision: ${why}` };
    }),
    noteSendFailures: assign(({ event }) => {
      const outcome = 'output' in event ? (event.output as SendOutcome) : undefined;
      return { note: `not every node could be sent the revision: ${describeFailures(outcome?.failed ?? {})}` };
    }),
    markFirstApplied: assign({ firstApplied: true }),
    noteFirstFailed: assign(({ context, event }) => ({
      note: `the first machine, ${context.first ?? '(none)'}, did not apply the revision: ${event.type === 'first.failed' ? event.reason : 'no reason given'}`,
    })),
    noteFirstSilent: assign(({ context }) => ({
      note: `the first machine, ${context.first ?? '(none)'}, did not report on the send within the wait`,
    })),
    recordPushed: assign(({ context, event }) => {
      if (event.type !== 'nodes.pushed') return {};
      const pushed = Object.keys(event.sent);
      return {
        sent: { ...context.sent, ...event.sent },
        skipped: withoutKeys(context.skipped, pushed),
        failed: withoutKeys(context.failed, pushed),
      };
    }),
    notePushedEverywhere: assign({ note: 'every node was sent the revision by a push' }),
    clearNote: assign({ note: null }),
    markResendFirst: assign({ resendFirst: true }),
    noteClosed: assign({ note: 'closed by hand' }),
    noteSuperseded: assign(({ event }) => ({
      supersededBy: event.type === 'plan.superseded' ? event.by : null,
      note: event.type === 'plan.superseded' ? `superseded by plan ${event.by}, which took in the nodes this one had not sent` : null,
    })),
  },
}).createMachine({
  id: 'plan',
  context: EMPTY_PLAN_CONTEXT,
  initial: 'opening',
  states: {
    /** Made for a new revision; opened at once with the nodes behind and the policy. */
    opening: {
      description: 'The plan row exists; the revision, the policy and the nodes behind are being taken in.',
      on: {
        'plan.opened': [
          { guard: 'isRecord', target: 'open.held', actions: 'open' },
          { guard: 'isTogether', target: 'open.sending', actions: 'open' },
          { target: 'open.sendingFirst', actions: 'open' },
        ],
      },
    },
    /** Open: closing, superseding and pushes are heard in every state under it. */
    open: {
      description: 'Open: it may still send, and a person may close it.',
      // Never entered through its initial state: `plan.opened` names the child for the policy.
      initial: 'held',
      on: {
        'operator.close': { target: 'closed', actions: 'noteClosed' },
        'plan.superseded': { target: 'superseded', actions: 'noteSuperseded' },
        'nodes.pushed': [
          { guard: 'leavesNothingUnsent', target: 'done', actions: ['recordPushed', 'notePushedEverywhere'] },
          { actions: 'recordPushed' },
        ],
      },
      states: {
        /** `record`: registered and held; only pushes send it. */
        held: {
          description: 'Held: a node gets the revision only when a push names it or pushes the whole mesh.',
        },
        /** `one-first`: the first machine is being sent the revision. */
        sendingFirst: {
          description: 'Sending the first machine the revision.',
          invoke: {
            id: 'sendFirst',
            src: 'sendFirst',
            input: ({ context }) => ({ node: context.first ?? '', resend: context.resendFirst }),
            onDone: [
              { guard: 'wasFirstSent', target: 'awaitingFirst', actions: 'recordSends' },
              { target: 'stopped', actions: ['recordSends', 'noteFirstNotSent'] },
            ],
          },
          on: { 'controller.resumed': { target: 'sendingFirst', reenter: true } },
        },
        /** `one-first`: the first machine has it; the others wait for its report on the send. */
        awaitingFirst: {
          description: "Waiting, within a bound, for the first machine's report after the send.",
          after: {
            firstReportWait: { target: 'stopped', actions: 'noteFirstSilent' },
          },
          on: {
            'first.applied': { target: 'sending', actions: 'markFirstApplied' },
            'first.failed': { target: 'stopped', actions: 'noteFirstFailed' },
            'controller.resumed': { target: 'awaitingFirst', reenter: true },
          },
        },
        /** Every node not yet sent is being sent the revision. */
        sending: {
          description: 'Sending every node not yet sent (all of them under `together`).',
          invoke: {
            id: 'sendRest',
            src: 'sendRest',
            input: ({ context }) => ({ nodes: unsentTargets(context) }),
            onDone: [
              { guard: 'hadFailures', target: 'stopped', actions: ['recordSends', 'noteSendFailures'] },
              { target: '#plan.done', actions: 'recordSends' },
            ],
          },
          on: { 'controller.resumed': { target: 'sending', reenter: true } },
        },
        /** Stopped with a note naming why; waits for a person to retry or close it. */
        stopped: {
          description: 'Stopped: the note names the machine and why. A person retries or closes it.',
          on: {
            'operator.retry': [
              { guard: 'needsFirst', target: 'sendingFirst', actions: ['clearNote', 'markResendFirst'] },
              { target: 'sending', actions: 'clearNote' },
            ],
          },
        },
      },
    },
    /** Every node was sent the revision (or was skipped, with why). */
    done: { description: 'Every node was sent the revision or skipped with a reason.', type: 'final' },
    /** A person closed it; what it never sent stays where it was. */
    closed: { description: 'Closed by hand; nodes not sent keep the revision they had.', type: 'final' },
    /** A newer plan for the module took in what this one had not sent. */
    superseded: { description: 'Superseded by a newer plan for the same module.', type: 'final' },
  },
});

/**
 * Where a plan is, by one name: `opening`, the state under `open` (`held`, `sendingFirst`,
 * `awaitingFirst`, `sending`, `stopped`), or how it ended (`done`, `closed`, `superseded`).
 * What the store keeps and the CLI shows.
 */
export type PlanState = 'opening' | 'held' | 'sendingFirst' | 'awaitingFirst' | 'sending' | 'stopped' | 'done' | 'closed' | 'superseded';

/** The states of a plan that has ended: nothing more is sent under it. */
export const ENDED_PLAN_STATES: readonly PlanState[] = ['done', 'closed', 'superseded'];

/** The one name of a machine state value (`{ open: 'held' }` is `held`). */
export function planStateOf(value: unknown): PlanState {
  if (typeof value === 'string') return value as PlanState;
  return (value as { open: PlanState }).open;
}

/** The machine state value of a plan state's name (`held` is `{ open: 'held' }`). */
export function planStateValue(state: PlanState): string | { open: PlanState } {
  return state === 'opening' || ENDED_PLAN_STATES.includes(state) ? state : { open: state };
}
