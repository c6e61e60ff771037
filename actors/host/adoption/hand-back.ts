import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Briefing, BriefingLine } from '../../../schema/briefing';
import type { Applier, ApplyContext, Removal } from '../appliers/applier';
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
// The briefing line, which says where the original was kept, is what tells a later host that a
// key still marked but with no copy left was handed back (2 or 3 done, 4 not), rather than half
// made by the host (which it would remove): it goes only in the last step. Until then a host
// killed part way finds either the copy, and puts it back again, or no copy and the line, and
// finishes. Keeping an original writes its record before its copy; handing back deletes the
// copy before its record, so that the copy alone always says "still kept".

/** What undoing an undeclared resource did: a removal by the table, or the original put back. */
export interface Undone {
  outcome: Removal | 'handed_back';
  detail?: string;
}

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

/**
 * Undoes one resource the host holds and no longer declares: hands back the machine's original
 * when adoption kept one (`keptAt`, from the briefing line) and the applier can put it back,
 * and otherwise removes it by the removal table. Throws what the applier throws (the resource
 * is then still the host's, and its copy still kept).
 */
export async function handBackOrRemove(applier: Applier, key: string, ctx: ApplyContext, keptAt: string | undefined): Promise<Undone> {
  if (keptAt === undefined) {
    const outcome = await applier.remove(key, ctx);
    // A record a host killed while keeping left, for a key it then made itself: nothing to keep.
    forgetKeptOriginal(ctx.stateDir, key);
    return { outcome };
  }
  if (applier.handBack === undefined) {
    // A package, service or container is undone by the table; the record of what the machine
    // had stays, the only account of it left.
    const outcome = await applier.remove(key, ctx);
    return { outcome, detail: `${outcome}; a ${applier.shape} is not handed back: what the machine had before adoption stays recorded at ${keptAt}` };
  }
  const put = await applier.handBack(key, ctx, originalsDirFor(ctx.stateDir, key));
  forgetKeptOriginal(ctx.stateDir, key);
  return {
    outcome: 'handed_back',
    detail: put === undefined
      ? `handed back the machine's original (put back before the host stopped; kept at ${keptAt} until then)`
      : `handed back the machine's original (${put}); its kept copy is removed`,
  };
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
