import path from 'node:path';
import type { KeptOriginal } from '../../../machines/adoption.machine';
import { resourceKey, type Resource } from '../../../schema/resource';
import type { Applier, ApplyContext } from '../appliers/applier';
import { MachineUnreadable, OriginalNotKept } from './keep-original-errors';

/**
 * Keeps the machine's original of `resource` in `dir` through its applier, before anything is
 * written, and says where it went (null when the machine has nothing to keep).
 *
 * When keeping fails, the applier is asked to look at the machine again: if the machine cannot
 * be read now, the failure is the machine's ({@link MachineUnreadable}); otherwise the copy
 * could not be made ({@link OriginalNotKept}). Asking the applier, rather than guessing from
 * error codes, keeps the reading of "unreadable" in one place per shape.
 */
export async function keepOriginal(applier: Applier, resource: Resource, ctx: ApplyContext, dir: string): Promise<KeptOriginal | null> {
  let kept: string | undefined;
  try {
    kept = await applier.keepOriginal(resource, ctx, dir);
  } catch (error) {
    const unreadable = await whyUnreadable(applier, resource, ctx);
    if (unreadable !== undefined) throw new MachineUnreadable(resourceKey(resource), unreadable, { cause: error });
    throw new OriginalNotKept(dir, errorText(error), { cause: error });
  }
  if (kept === undefined) return null;
  // The contract asks for the path of what was kept; an applier that describes it instead
  // still kept it under `dir`, which is then the place to look.
  return { at: path.isAbsolute(kept) ? path.resolve(kept) : dir };
}

async function whyUnreadable(applier: Applier, resource: Resource, ctx: ApplyContext): Promise<string | undefined> {
  try {
    return (await applier.observe(resource, ctx)).unreadable;
  } catch (error) {
    return errorText(error);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
