import { assertEvent, assign, fromPromise, setup } from 'xstate';
import type { BriefingLine } from '../schema/briefing';

// One adoption decision: the first apply found something on the machine that the host did not
// create, for one declared resource. Three rules from the seed decide it:
//
// - the original is kept before anything is written, and if it cannot be kept nothing is
//   written (a one-way door on a working machine is not an installation);
// - on conflict the machine's value wins: the host writes nothing and says so;
// - the result is a briefing line, `ok`, `kept`, `unknown` or `failed`, never a bare result.
//
// Why the observation is an event and not input: the machine branches on what the machine was
// found to have (matches, conflicts, cannot be read), and the model tests generate their paths
// from events. With the observation in input, one model could reach only one of the branches.
// So the machine starts `looking`, and the host hands it what converge observed as
// `resource.observed` right after starting it.
//
// Why unreadable is decided before keeping the original: there is nothing to keep from what
// cannot be read, and trying would turn "we could not tell" (unknown) into "we could not do"
// (failed), which the briefing treats differently (only `failed` holds back assignment).

/**
 * What the machine has for one resource, as the resource's applier observed it. The same shape
 * as the host's `Observation` (machines/ may not import actors/).
 */
export interface AdoptionObservation {
  /** Something is there at all. */
  present: boolean;
  /** Empty exactly when the machine matches the declaration; one readable line each otherwise. */
  differences: string[];
  /** Set when the machine could not be read: the reason. */
  unreadable?: string;
}

/** Where the original was kept: an absolute path under the originals directory. */
export interface KeptOriginal {
  at: string;
}

/** What the `keepOriginal` actor is given: the directory it keeps the original in. */
export interface KeepOriginalInput {
  dir: string;
}

/**
 * How the `keepOriginal` actor fails. It rejects with an error whose `couldNotRead` is true
 * when the machine's side could not be read while keeping (the line is `unknown`); any other
 * rejection means the copy could not be made (the line is `failed`). Either way nothing was
 * written to the machine.
 */
export interface KeepOriginalFailure {
  message: string;
  couldNotRead?: boolean;
}

/** What one adoption is started with. */
export interface AdoptionInput {
  /** The briefing line's subject: the resource key (`file:/etc/docker/daemon.json`), at most 120 characters. */
  subject: string;
  /** Where the original is kept: `<state dir>/originals/<the key, safe as a file name>`. */
  originalsDir: string;
}

/**
 * The decision, as the reconcile engine takes it (`AdoptionDecision` in
 * actors/host/reconcile/converge.ts). `take`: the host owns the resource from now on.
 */
export interface AdoptionOutcome {
  take: boolean;
  line: BriefingLine;
  /** Where the machine's original was kept, when something was. */
  originalKeptAt?: string;
}

/** Events an adoption accepts besides its `keepOriginal` outcomes. */
export type AdoptionEvent =
  /** What the resource's applier found on the machine, sent by the host right after starting. */
  { type: 'resource.observed'; observation: AdoptionObservation };

/** What an adoption remembers. */
export interface AdoptionContext {
  subject: string;
  originalsDir: string;
  observation: AdoptionObservation | null;
  /** Set on the way into a final state; the machine's output. */
  decision: AdoptionOutcome | null;
}

/** The most a line's detail may hold (the briefing contract's limit). */
export const MAX_DETAIL = 4096;

/**
 * One adoption decision for one resource:
 *
 * ```
 * looking ──observed, unreadable──────────────────────────────► unknown
 *    │
 *    └─observed──► keepingOriginal ──kept, matches──────────────► taken   (ok)
 *                        │         ──kept, differs──────────────► kept
 *                        │         ──could not read─────────────► unknown
 *                        └───────────could not keep─────────────► failed
 * ```
 *
 * The host provides `keepOriginal` with `adoptionMachine.provide({ actors: { keepOriginal } })`
 * (actors/host/adoption/adoption.actor.ts), starts it with an {@link AdoptionInput}, sends
 * `resource.observed`, and takes the output, an {@link AdoptionOutcome}, as its decision.
 * Adoption always completes: every path ends in a final state with a line.
 */
export const adoptionMachine = setup({
  types: {
    context: {} as AdoptionContext,
    events: {} as AdoptionEvent,
    input: {} as AdoptionInput,
    output: {} as AdoptionOutcome,
  },
  actors: {
    keepOriginal: fromPromise<KeptOriginal | null, KeepOriginalInput>(async () => {
      throw new Error('adoption: provide the keepOriginal actor with adoptionMachine.provide({ actors: { keepOriginal } })');
    }),
  },
  guards: {
    /** The applier could not read the machine, so there is nothing to keep or compare. */
    isUnreadable: ({ event }) => event.type === 'resource.observed' && event.observation.unreadable !== undefined,
    /** The machine already holds what is declared. */
    matchesDeclaration: ({ context }) => context.observation !== null && context.observation.differences.length === 0,
    /** Keeping failed because the machine could not be read, not because the copy could not be made. */
    couldNotRead: ({ event }) => 'error' in event && couldNotRead(event.error),
  },
  actions: {
    recordObservation: assign({
      observation: ({ event }) => {
        assertEvent(event, 'resource.observed');
        return event.observation;
      },
    }),
    decideUnreadable: assign({
      decision: ({ context, event }) => {
        assertEvent(event, 'resource.observed');
        const reason = event.observation.unreadable ?? 'no reason given';
        return { take: false, line: line('unknown', context.subject, `could not be read: ${reason}; nothing was kept or written`) };
      },
    }),
    decideTaken: assign({
      decision: ({ context, event }) => {
        const kept = keptFrom(event);
        const main = 'already as declared; adopted, the host owns it from now on';
        return withOriginal({ take: true, line: line('ok', context.subject, main, keptText(kept)) }, kept);
      },
    }),
    decideKept: assign({
      decision: ({ context, event }) => {
        const kept = keptFrom(event);
        const found = context.observation?.differences.join('; ') || 'differs from the declaration';
        const main = `${found} — the machine's value wins, nothing was written`;
        return withOriginal({ take: false, line: line('kept', context.subject, main, keptText(kept)) }, kept);
      },
    }),
    decideCouldNotRead: assign({
      decision: ({ context, event }) => {
        const reason = failureText('error' in event ? event.error : undefined);
        return { take: false, line: line('unknown', context.subject, `could not be read while keeping the original, so nothing was written: ${reason}`) };
      },
    }),
    decideFailed: assign({
      decision: ({ context, event }) => {
        const reason = failureText('error' in event ? event.error : undefined);
        return { take: false, line: line('failed', context.subject, `the original could not be kept, so nothing was written: ${reason}`) };
      },
    }),
  },
}).createMachine({
  id: 'adoption',
  description: 'One adoption decision: keep the original before anything is written; on conflict the machine wins; say it in a briefing line.',
  initial: 'looking',
  context: ({ input }) => ({ subject: input.subject, originalsDir: input.originalsDir, observation: null, decision: null }),
  output: ({ context }) => context.decision ?? { take: false, line: line('failed', context.subject, 'adoption ended without a decision') },
  states: {
    // Left at once in practice: the host sends the observation right after starting.
    looking: {
      description: 'Waits for what the applier found on the machine for this resource.',
      on: {
        'resource.observed': [
          { guard: 'isUnreadable', target: 'unknown', actions: ['recordObservation', 'decideUnreadable'] },
          { target: 'keepingOriginal', actions: 'recordObservation' },
        ],
      },
    },
    // Kept whether or not the machine matches: a resource the host takes over may later be
    // rewritten or removed by a declaration, and the machine's own copy must survive that.
    keepingOriginal: {
      description: 'Copies what the machine has into the originals directory. Nothing is written to the machine here or before.',
      invoke: {
        id: 'keepOriginal',
        src: 'keepOriginal',
        input: ({ context }) => ({ dir: context.originalsDir }),
        onDone: [
          { guard: 'matchesDeclaration', target: 'taken', actions: 'decideTaken' },
          { target: 'kept', actions: 'decideKept' },
        ],
        onError: [
          { guard: 'couldNotRead', target: 'unknown', actions: 'decideCouldNotRead' },
          { target: 'failed', actions: 'decideFailed' },
        ],
      },
    },
    taken: {
      type: 'final',
      description: 'ok: the machine already matched; the host owns the resource from now on (adopted), its original kept.',
    },
    kept: {
      type: 'final',
      description: 'kept: the machine differs and its value wins; the host wrote nothing and leaves the resource alone until the difference is resolved.',
    },
    unknown: {
      type: 'final',
      description: 'unknown: the machine could not be read, so whether it matches is not known; nothing was kept or written.',
    },
    failed: {
      type: 'final',
      description: 'failed: the original could not be kept, so nothing was written. The node is not given work until this is resolved.',
    },
  },
});

/** True when a keepOriginal rejection says the machine could not be read (see {@link KeepOriginalFailure}). */
export function couldNotRead(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { couldNotRead?: unknown }).couldNotRead === true;
}

function keptFrom(event: { type: string }): KeptOriginal | null {
  const output = 'output' in event ? (event as { output?: unknown }).output : undefined;
  if (typeof output !== 'object' || output === null) return null;
  const at = (output as { at?: unknown }).at;
  return typeof at === 'string' && at !== '' ? { at } : null;
}

function keptText(kept: KeptOriginal | null): string {
  return kept === null ? 'nothing to keep' : `original kept at ${kept.at}`;
}

function withOriginal(outcome: AdoptionOutcome, kept: KeptOriginal | null): AdoptionOutcome {
  if (kept === null) return outcome;
  return { ...outcome, line: { ...outcome.line, original_kept_at: kept.at }, originalKeptAt: kept.at };
}

/**
 * A line whose detail fits the contract: the main part is shortened if it must be, so the
 * tail (where the original went) is never the part cut off.
 */
function line(status: BriefingLine['status'], subject: string, main: string, tail?: string): BriefingLine {
  const suffix = tail === undefined ? '' : `; ${tail}`;
  const room = MAX_DETAIL - suffix.length;
  const body = main.length > room ? `${main.slice(0, Math.max(0, room - 1))}…` : main;
  return { status, subject, detail: `${body}${suffix}`.slice(0, MAX_DETAIL) };
}

function failureText(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return String(error);
}
