import { and, assertEvent, assign, fromPromise, setup } from 'xstate';
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
//
// Hand-back is the same resource's end: once it is no longer declared (undeclared, or the node
// released), what adoption took over gets the machine's original back, and what the host made
// itself is removed by the removal table. It lives in this machine because the two rules are
// one promise: the original kept on the way in is what is put back on the way out, and the host
// never destroys what it did not make. A host that took a resource over is `taken` until then;
// the host, which may be another process by that time, restores that state from its store (the
// briefing line says where the original was kept) and sends `resource.released`.
//
// A conflict (`kept`, `unknown`, `failed`: the host wrote nothing) is not the end either. When
// the machine's value is later gone (a person removed it to let the declaration win) the host
// applies the declaration and sends `resource.applied`: the conflict is resolved, and what the
// host holds from then on, and what its line says, is decided here: adopted with the original
// kept on the way in (`taken`), or made by the host (`made`). When it is no longer declared
// before that (`resource.released`), the host never wrote it and the machine keeps its value:
// the line goes, and so does the copy kept for it (`dropped`). The host restores the conflict
// from its store (the line's status names the state, see {@link conflictSnapshotContext}).

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

/** What the removal table did with a resource: the host's `Removal` (machines/ may not import actors/). */
export type RemovalOutcome = 'removed' | 'stopped' | 'forgotten';

/**
 * What the `handBack` actor did with the original kept under its `dir`: `handed_back` when the
 * machine has its original again (put back, or left in place as it was found), with what that
 * was ("content, mode 0640, owner 1000:1000"); a removal when what is there now is not the
 * original and cannot be made so (a container the host made in its place): undone by the
 * removal table, the record of the original staying kept. The actor resolves null when no
 * copy is kept under `dir`.
 */
export interface HandBackResult {
  outcome: 'handed_back' | RemovalOutcome;
  what: string;
}

/** What the `handBack` actor is given: the directory the original was kept in. */
export interface HandBackInput {
  dir: string;
}

/**
 * What undoing a resource the host no longer declares came to, as the reconcile engine takes
 * it (see `handBackOrRemove` in actors/host/adoption/hand-back.ts).
 */
export interface ReleaseOutcome {
  /** What the report says of the resource. `failed` with `held` false: said, and left alone. */
  outcome: 'handed_back' | RemovalOutcome | 'failed';
  detail?: string;
  /** The host still holds it (undoing it failed): owned again, tried again on the next pass. */
  held: boolean;
  /** The briefing line from now on when not held: null when nothing of it is held any more. */
  line: BriefingLine | null;
  /** A kept copy nothing serves any more (a conflict dropped): the host deletes it, before the line. */
  forgetOriginalAt?: string;
}

/** Events an adoption accepts besides the outcomes of its invoked actors. */
export type AdoptionEvent =
  /** What the resource's applier found on the machine, sent by the host right after starting. */
  | { type: 'resource.observed'; observation: AdoptionObservation }
  /**
   * The resource is no longer declared. `resuming`: the store says the host was already
   * undoing it when it stopped, so a copy no longer kept was put back then, not lost.
   */
  | { type: 'resource.released'; resuming: boolean }
  /**
   * A conflict was resolved: the machine's value was gone, so the host applied the declaration
   * and recorded it. Sent to a conflict restored from the store.
   */
  | { type: 'resource.applied' };

/** What an adoption remembers. */
export interface AdoptionContext {
  subject: string;
  originalsDir: string;
  observation: AdoptionObservation | null;
  /** Set once adoption decided (`taken`, `kept`, `unknown`, `failed`); what the host records. */
  decision: AdoptionOutcome | null;
  /** Set by `resource.released`. */
  resuming: boolean;
  /** Set on the way into a final state of a release; then the machine's output. */
  release: ReleaseOutcome | null;
}

/** The machine's output: an adoption decision, or what a release came to. */
export type AdoptionOutput = AdoptionOutcome | ReleaseOutcome;

/** True when an output is what a release came to, not an adoption decision. */
export function isReleaseOutcome(output: AdoptionOutput): output is ReleaseOutcome {
  return 'held' in output;
}

/** The state a taken resource rests in between passes, for restoring it (see {@link takenSnapshotContext}). */
export const TAKEN = 'taken';

/**
 * The context of a resource the host took over by adoption, rebuilt from what the store holds
 * (its briefing line, where the original was kept), so that `adoptionMachine.resolveState({
 * value: TAKEN, context })` is the machine as adoption left it.
 */
export function takenSnapshotContext(input: AdoptionInput, line: BriefingLine, originalKeptAt: string | undefined): AdoptionContext {
  const decision: AdoptionOutcome = { take: true, line, ...(originalKeptAt === undefined ? {} : { originalKeptAt }) };
  return { subject: input.subject, originalsDir: input.originalsDir, observation: null, decision, resuming: false, release: null };
}

/** A conflict's state, by the status of its briefing line: `conflict.kept`, `conflict.unknown`, `conflict.failed`. */
export type ConflictStatus = 'kept' | 'unknown' | 'failed';

/** The state value of a conflict whose line has `status`, for `resolveState`; undefined for an `ok` line. */
export function conflictStateOf(status: BriefingLine['status']): { conflict: ConflictStatus } | undefined {
  return status === 'ok' ? undefined : { conflict: status };
}

/**
 * The context of a conflict, rebuilt from its briefing line in the store, so that
 * `adoptionMachine.resolveState({ value: conflictStateOf(line.status), context })` is the machine
 * as adoption left it.
 */
export function conflictSnapshotContext(input: AdoptionInput, line: BriefingLine): AdoptionContext {
  const kept = line.original_kept_at;
  const decision: AdoptionOutcome = { take: false, line, ...(kept === undefined ? {} : { originalKeptAt: kept }) };
  return { subject: input.subject, originalsDir: input.originalsDir, observation: null, decision, resuming: false, release: null };
}

/** The most a line's detail may hold (the briefing contract's limit). */
export const MAX_DETAIL = 4096;

/**
 * One resource the host meets on the machine, from adoption to hand-back:
 *
 * ```
 * looking ──observed, unreadable──────────────────────────────► unknown
 *    │
 *    ├─observed──► keepingOriginal ──kept, matches──────────────► taken   (ok)
 *    │                   │         ──kept, differs──────────────► conflict.kept
 *    │                   │         ──could not read─────────────► conflict.unknown
 *    │                   └───────────could not keep─────────────► conflict.failed
 *    │
 *    │   conflict ──applied, its own original kept──► taken   (resolved)
 *    │            ──applied, nothing kept───────────► made    (resolved)
 *    │            ──released────────────────────────► dropped
 *    │   made ──released──► removing
 *    └─released (the host made it)──► removing ──done──────────► removed
 *                                         └──────error─────────► stillHeld
 *
 * taken ──released──► handingBack ──put back / left as found───► handedBack
 *                         │       ──nothing kept, resuming─────► handedBack
 *                         │       ──nothing kept───────────────► originalMissing
 *                         │       ──not the original any more──► notHandedBack
 *                         └────────could not put back──────────► stillHeld
 * ```
 *
 * The host provides `keepOriginal`, `handBack` and `remove` with `adoptionMachine.provide({
 * actors })` (actors/host/adoption/adoption.actor.ts, hand-back.ts). Adoption: start it with an
 * {@link AdoptionInput}, send `resource.observed`, and take `context.decision` once the
 * snapshot has the `decided` tag. Release: restore `taken` (see {@link takenSnapshotContext}),
 * or start afresh for what the host made itself, send `resource.released`, and take the
 * output, a {@link ReleaseOutcome}. Every path ends with a line or says why not.
 */
export const adoptionMachine = setup({
  types: {
    context: {} as AdoptionContext,
    events: {} as AdoptionEvent,
    input: {} as AdoptionInput,
    output: {} as AdoptionOutput,
  },
  actors: {
    keepOriginal: fromPromise<KeptOriginal | null, KeepOriginalInput>(async () => {
      throw new Error('adoption: provide the keepOriginal actor with adoptionMachine.provide({ actors: { keepOriginal } })');
    }),
    handBack: fromPromise<HandBackResult | null, HandBackInput>(async () => {
      throw new Error('adoption: provide the handBack actor with adoptionMachine.provide({ actors: { handBack } })');
    }),
    remove: fromPromise<RemovalOutcome, void>(async () => {
      throw new Error('adoption: provide the remove actor with adoptionMachine.provide({ actors: { remove } })');
    }),
  },
  guards: {
    /** The applier could not read the machine, so there is nothing to keep or compare. */
    isUnreadable: ({ event }) => event.type === 'resource.observed' && event.observation.unreadable !== undefined,
    /** The conflict kept the machine's original, in this resource's own originals folder. */
    keptOwnOriginal: ({ context }) => ownOriginal(context) !== undefined,
    /** The machine already holds what is declared. */
    matchesDeclaration: ({ context }) => context.observation !== null && context.observation.differences.length === 0,
    /** Keeping failed because the machine could not be read, not because the copy could not be made. */
    couldNotRead: ({ event }) => 'error' in event && couldNotRead(event.error),
    /** The handBack actor found no copy kept under the originals folder. */
    nothingKept: ({ event }) => handBackFrom(event) === null,
    /** The host was already undoing the resource when it stopped (see `resource.released`). */
    resuming: ({ context }) => context.resuming,
    /** The machine has its original again. */
    handedBack: ({ event }) => handBackFrom(event)?.outcome === 'handed_back',
  },
  actions: {
    recordRelease: assign({
      resuming: ({ event }) => {
        assertEvent(event, 'resource.released');
        return event.resuming;
      },
    }),
    decideRemoved: assign({
      release: ({ event }) => releaseOfMade({ removal: 'output' in event ? (event as { output: unknown }).output : 'removed' }),
    }),
    decideHandedBack: assign({
      release: ({ context, event }) => {
        const result = handBackFrom(event);
        const detail = result === null || result === undefined
          ? `handed back the machine's original (put back before the host stopped; kept at ${keptAtOf(context)} until then)`
          : `handed back the machine's original (${result.what}); its kept copy is removed`;
        return { outcome: 'handed_back', detail: clip(detail), held: false, line: null };
      },
    }),
    decideOriginalMissing: assign({
      release: ({ context }) => ({
        outcome: 'failed',
        detail: clip(
          `the machine's original kept at ${keptAtOf(context)} is no longer there, so nothing was put back: `
            + 'left as it is on the machine (the host\'s last write), and no longer the host\'s',
        ),
        held: false,
        line: null,
      }),
    }),
    decideNotHandedBack: assign({
      release: ({ context, event }) => {
        const result = handBackFrom(event);
        const detail = clip(`${result?.outcome ?? 'removed'}; ${result?.what ?? 'not handed back'}`);
        const kept = context.decision?.line;
        // The line stays, saying so: it is the only pointer to the record of the original left kept.
        return { outcome: asRemoval(result?.outcome ?? 'removed'), detail, held: false, line: kept === undefined ? null : { ...kept, detail } };
      },
    }),
    decideStillHeld: assign({
      release: ({ context, event }) => {
        const reason = failureText('error' in event ? event.error : undefined);
        const kept = context.decision?.originalKeptAt;
        if (kept === undefined && context.decision?.line === undefined) return releaseOfMade({ error: 'error' in event ? event.error : undefined });
        const detail = kept === undefined
          ? `could not remove it, so it is still owned: ${reason}`
          : `could not hand it back, so it is still owned: ${reason}`;
        return { outcome: 'failed', detail: clip(detail), held: true, line: context.decision?.line ?? null };
      },
    }),
    decideResolved: assign({
      decision: ({ context }) => {
        const keptAt = ownOriginal(context);
        const before = `was ${context.decision?.line.status ?? 'a conflict'}`;
        if (keptAt === undefined) {
          const detail = `resolved (${before}): nothing of the machine's was there any more, so the host made it as declared; nothing was kept`;
          return { take: true, line: { status: 'ok' as const, subject: context.subject, detail } };
        }
        const main = `resolved (${before}): the machine's value was no longer there, so the declaration was applied; adopted, the host owns it `
          + 'from now on and hands the original back when it is no longer declared';
        return withOriginal({ take: true, line: line('ok', context.subject, main, `original kept at ${keptAt}`) }, { at: keptAt });
      },
    }),
    decideDropped: assign({
      release: ({ context }) => {
        const keptAt = context.decision?.originalKeptAt;
        const detail = 'no longer declared: the host never wrote it and the machine keeps its own value, so nothing of it is held any more';
        return { outcome: 'forgotten' as const, detail, held: false, line: null, ...(keptAt === undefined ? {} : { forgetOriginalAt: keptAt }) };
      },
    }),
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
  context: ({ input }) => ({ subject: input.subject, originalsDir: input.originalsDir, observation: null, decision: null, resuming: false, release: null }),
  output: ({ context }) => context.release ?? context.decision ?? { take: false, line: line('failed', context.subject, 'adoption ended without a decision') },
  states: {
    // Left at once in practice: the host sends the observation right after starting.
    looking: {
      description: 'Waits for what the applier found on the machine for this resource.',
      on: {
        'resource.observed': [
          { guard: 'isUnreadable', target: '#adoption.conflict.unknown', actions: ['recordObservation', 'decideUnreadable'] },
          { target: 'keepingOriginal', actions: 'recordObservation' },
        ],
        // Nothing adoption took over: the host made it itself, and removes it by the table.
        'resource.released': { target: 'removing', actions: 'recordRelease' },
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
          { target: '#adoption.conflict.kept', actions: 'decideKept' },
        ],
        onError: [
          { guard: 'couldNotRead', target: '#adoption.conflict.unknown', actions: 'decideCouldNotRead' },
          { target: '#adoption.conflict.failed', actions: 'decideFailed' },
        ],
      },
    },
    // Not final: the host holds the resource until it is no longer declared, then hands it back.
    taken: {
      tags: ['decided'],
      description: 'ok: the machine already matched; the host owns the resource from now on (adopted), its original kept until it is handed back.',
      on: {
        'resource.released': { target: 'handingBack', actions: 'recordRelease' },
      },
    },
    handingBack: {
      description: 'Puts the kept original back (or leaves the original in place), and deletes the kept copy only once it is back.',
      invoke: {
        id: 'handBack',
        src: 'handBack',
        input: ({ context }) => ({ dir: context.originalsDir }),
        onDone: [
          { guard: 'handedBack', target: 'handedBack', actions: 'decideHandedBack' },
          // A host killed after putting the original back and deleting its copy, before its store said so.
          { guard: and(['nothingKept', 'resuming']), target: 'handedBack', actions: 'decideHandedBack' },
          { guard: 'nothingKept', target: 'originalMissing', actions: 'decideOriginalMissing' },
          { target: 'notHandedBack', actions: 'decideNotHandedBack' },
        ],
        onError: { target: 'stillHeld', actions: 'decideStillHeld' },
      },
    },
    // Not final either: what the host made once a conflict was resolved is its own, and is
    // removed by the table when no longer declared.
    made: {
      tags: ['decided'],
      description: 'resolved: the machine\'s value was gone and nothing of it was kept, so the host made the resource as declared and holds it as its own.',
      on: {
        'resource.released': { target: 'removing', actions: 'recordRelease' },
      },
    },
    removing: {
      description: 'Removes what the host made itself, by the removal table (a file removed, a package forgotten).',
      invoke: {
        id: 'remove',
        src: 'remove',
        onDone: { target: 'removed', actions: 'decideRemoved' },
        onError: { target: 'stillHeld', actions: 'decideStillHeld' },
      },
    },
    handedBack: {
      type: 'final',
      description: 'handed back: the machine has its original again; no copy, record or line of it is left.',
    },
    originalMissing: {
      type: 'final',
      description: 'The kept original was gone before it could be put back: said, and the resource is left as it is and no longer held.',
    },
    notHandedBack: {
      type: 'final',
      description: 'What is there now is not the original and cannot be made so: undone by the removal table; the record of the original and its line stay.',
    },
    removed: {
      type: 'final',
      description: 'The host made it itself: undone by the removal table; no line of it is left.',
    },
    stillHeld: {
      type: 'final',
      description: 'Undoing it failed: the host still holds it, its original still kept, and tries again on the next pass.',
    },
    // The host wrote nothing and holds nothing; the line stays until the conflict is resolved
    // (the machine's value gone, the declaration applied) or the resource is no longer declared.
    conflict: {
      description: 'The host wrote nothing: the line says why, until the declaration is applied after all or the resource is no longer declared.',
      on: {
        'resource.applied': [
          { guard: 'keptOwnOriginal', target: 'taken', actions: 'decideResolved' },
          { target: 'made', actions: 'decideResolved' },
        ],
        'resource.released': { target: 'dropped', actions: ['recordRelease', 'decideDropped'] },
      },
      initial: 'kept',
      states: {
        kept: {
          tags: ['decided'],
          description: 'kept: the machine differs and its value wins; the host wrote nothing and leaves the resource alone until the difference is resolved.',
        },
        unknown: {
          tags: ['decided'],
          description: 'unknown: the machine could not be read, so whether it matches is not known; nothing was kept or written.',
        },
        failed: {
          tags: ['decided'],
          description: 'failed: the original could not be kept, so nothing was written. The node is not given work until this is resolved.',
        },
      },
    },
    dropped: {
      type: 'final',
      description: 'A conflict no longer declared: the machine keeps its own value; its line and the copy kept for it go.',
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

function handBackFrom(event: { type: string }): HandBackResult | null | undefined {
  if (!('output' in event)) return undefined;
  const output = (event as { output?: unknown }).output;
  if (output === null || output === undefined) return null;
  const { outcome, what } = output as { outcome?: unknown; what?: unknown };
  if (typeof what !== 'string') return null;
  return outcome === 'handed_back' || outcome === 'removed' || outcome === 'stopped' || outcome === 'forgotten' ? { outcome, what } : null;
}

/**
 * How the machine settles a resource the host made itself (`looking` → `removing`): removed by
 * the removal table, or, when that failed, still held and tried again next pass. Exported so a
 * host undoing many such resources can take this decision without an actor for each (see
 * handBackOrRemove); the machine's own paths run through it too.
 */
export function releaseOfMade(result: { removal: unknown } | { error: unknown }): ReleaseOutcome {
  if ('removal' in result) return { outcome: asRemoval(String(result.removal)), held: false, line: null };
  return { outcome: 'failed', detail: clip(`could not remove it, so it is still owned: ${failureText(result.error)}`), held: true, line: null };
}

function asRemoval(value: string): RemovalOutcome {
  return value === 'stopped' || value === 'forgotten' ? value : 'removed';
}

// Where the conflict kept the machine's original, when that is inside this resource's own
// originals folder: a line of another key whose shortened subject is the same does not count.
function ownOriginal(context: AdoptionContext): string | undefined {
  const at = context.decision?.originalKeptAt;
  if (at === undefined) return undefined;
  return at === context.originalsDir || at.startsWith(`${context.originalsDir}/`) ? at : undefined;
}

function keptAtOf(context: AdoptionContext): string {
  return context.decision?.originalKeptAt ?? context.originalsDir;
}

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
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
