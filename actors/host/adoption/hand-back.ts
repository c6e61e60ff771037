import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Briefing, BriefingLine } from '../../../schema/briefing';
import { createActor, fromPromise, toPromise } from 'xstate';
import type * as AdoptionMachine from '../../../machines/adoption.machine';
import type { HandBackInput, HandBackResult, ReleaseOutcome, RemovalOutcome } from '../../../machines/adoption.machine';
import type { Applier, ApplyContext } from '../appliers/applier';
import { briefingSubject } from './briefing-subject';
import { ORIGINALS_DIR, originalsDirFor } from './originals-dir';

// Handing back: a resource adoption took over, and that is no longer declared, gets the
// machine's original back instead of being removed (the host never destroys what it did not
// make). The order, against a host killed at any instant:
//
//   1. converge moves the key from owned to applying (the store says: the host is undoing it);
//   2. the applier puts the original back, synced, then deletes the kept copy, then its record;
//   3. the leftovers of the key's originals folder are removed;
//   4. converge clears the key's mark and drops its briefing line, in one store write.
//
// What to do, and what to say, is the adoption machine's decision (machines/adoption.machine.ts,
// from `taken` on `resource.released`); this file wires its actors to the resource's applier.
//
// The briefing line, which says where the original was kept, is what tells a later host that a
// key still marked but with no copy left was handed back (2 or 3 done, 4 not), rather than half
// made by the host (which it would remove): it goes only in the last step. Until then a host
// killed part way finds either the copy, and puts it back again, or no copy and the line, and
// finishes. Keeping an original writes its record before its copy; handing back deletes the
// copy before its record, so that the copy alone always says "still kept".

/** The briefing line about `key`, if the briefing has one. */
export function lineOf(briefing: Briefing | null, key: string): BriefingLine | undefined {
  const subject = briefingSubject(key);
  return briefing?.lines.find((line) => line.subject === subject);
}

/**
 * Where adoption kept the machine's original of `key`, as its briefing line says, when that is
 * inside the key's own originals folder (a line of another key whose shortened subject is the
 * same does not count); undefined when nothing was kept.
 */
export function keptOriginalOf(line: BriefingLine | undefined, key: string, stateDir: string): string | undefined {
  const at = line?.original_kept_at;
  if (at === undefined) return undefined;
  const dir = originalsDirFor(stateDir, key);
  return at === dir || at.startsWith(`${dir}/`) ? at : undefined;
}

/** What undoing an undeclared resource came to: the adoption machine's {@link ReleaseOutcome}. */
export type Undone = ReleaseOutcome;

/** What the store holds of a resource about to be undone. */
export interface HeldResource {
  /** Its briefing line, when it has one. */
  line: BriefingLine | undefined;
  /** Where adoption kept the machine's original (see {@link keptOriginalOf}); undefined when nothing was kept. */
  keptAt: string | undefined;
  /** The store says the host was already undoing it when it stopped (marked, not owned). */
  resuming: boolean;
}

/**
 * The adoption machine's module, loaded the first time something is undone: an enrolled host at
 * rest holds what it declared and never loads it (see lazyAdopter in run/node-setup.ts).
 */
function machine(): typeof AdoptionMachine {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../../machines/adoption.machine') as typeof AdoptionMachine;
}

/**
 * The adoption machine with its `handBack` and `remove` actors wired to `applier`: what the host
 * does for one resource it no longer declares. A shape whose applier cannot hand back (a
 * package, a service) is undone by the removal table, its record of the original staying kept.
 */
export function releaseLogic(applier: Applier, key: string, ctx: ApplyContext) {
  return machine().adoptionMachine.provide({
    actors: {
      remove: fromPromise<RemovalOutcome, void>(async () => {
        const outcome = await applier.remove(key, ctx);
        // A record a host killed while keeping left, for a key it then made itself: nothing to keep.
        forgetKeptOriginal(ctx.stateDir, key);
        return outcome;
      }),
      handBack: fromPromise<HandBackResult | null, HandBackInput>(async ({ input }) => {
        if (applier.handBack === undefined) {
          const outcome = await applier.remove(key, ctx);
          return { outcome, what: `a ${applier.shape} is not handed back: what the machine had before adoption stays recorded at ${input.dir}` };
        }
        const result = await applier.handBack(key, ctx, input.dir);
        // Handed back, or no copy left: what remains of the folder serves nothing. Otherwise the
        // record is the only account left of what the machine had.
        if (result === undefined || result.outcome === 'handed_back') forgetKeptOriginal(ctx.stateDir, key);
        return result ?? null;
      }),
    },
  });
}

/**
 * Undoes one resource the host holds and no longer declares, as the adoption machine decides:
 * hands back the machine's original when adoption kept one, removes by the removal table what
 * the host made itself. Never throws: a failure comes back `held` (the resource is still the
 * host's, its copy still kept).
 */
export async function handBackOrRemove(applier: Applier, key: string, ctx: ApplyContext, held: HeldResource): Promise<Undone> {
  // What the host made itself (no kept original, no briefing line) goes `looking` → `removing`
  // in the machine, always: that decision is taken here without an actor per resource, which
  // made removing a thousand files take two and a half times as long as writing them.
  if (held.keptAt === undefined && held.line === undefined) {
    try {
      const removal = await applier.remove(key, ctx);
      forgetKeptOriginal(ctx.stateDir, key);
      return machine().releaseOfMade({ removal });
    } catch (error) {
      return machine().releaseOfMade({ error });
    }
  }
  const input = { subject: briefingSubject(key), originalsDir: originalsDirFor(ctx.stateDir, key) };
  const logic = releaseLogic(applier, key, ctx);
  // What adoption took over rests in `taken`, rebuilt from the store; what the host made
  // itself never went through adoption, and starts afresh.
  const snapshot = held.keptAt === undefined
    ? undefined
    : logic.resolveState({ value: machine().TAKEN, context: machine().takenSnapshotContext(input, held.line ?? { status: 'ok', subject: input.subject, detail: 'adopted' }, held.keptAt) });
  const actor = createActor(logic, snapshot === undefined ? { input } : { input, snapshot });
  try {
    const done = toPromise(actor);
    actor.start();
    actor.send({ type: 'resource.released', resuming: held.resuming });
    const output = await done;
    if (machine().isReleaseOutcome(output)) return output;
    throw new Error('the adoption machine ended in an adoption decision on release');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { outcome: 'failed', detail: `could not undo it, so it is still owned: ${reason}`.slice(0, 4096), held: true, line: held.line ?? null };
  } finally {
    actor.stop();
  }
}

/** Removes whatever is left of `key`'s originals folder. */
export function forgetKeptOriginal(stateDir: string, key: string): void {
  rmSync(originalsDirFor(stateDir, key), { recursive: true, force: true });
}

/**
 * Removes the originals folder a line's `original_kept_at` lies in (a conflict the host never
 * wrote over, whose resource is no longer declared: the machine still has its own value, so
 * the copy serves nothing). Nothing outside the originals folder is ever removed.
 */
export function forgetKeptAt(stateDir: string, keptAt: string | undefined): void {
  if (keptAt === undefined) return;
  const originals = path.join(path.resolve(stateDir), ORIGINALS_DIR);
  const relative = path.relative(originals, keptAt);
  const first = relative.split(path.sep)[0];
  if (first === undefined || first === '' || first === '..' || path.isAbsolute(relative)) return;
  rmSync(path.join(originals, first), { recursive: true, force: true });
}
