import { resourceKey, type Resource } from '../../../schema/resource';
import { OperatorError } from '../../shared/operator-error';
import type { ApplyContext } from '../appliers/applier';
import { applierFor, type ApplierSet } from '../reconcile/applier-set';

/** A declaration applied by hand names something the host may not take: none of it is applied or held. */
export class DeclarationRefused extends OperatorError {}

/**
 * Refuses a hand-applied declaration whole when any of its resources is not the host's to
 * take (the seed: a declaration naming the host's own unit is refused), as the gate refuses a
 * controller's (link/admit-declaration.ts): the host's own unit, launcher or resume unit, a file
 * of theirs or in the state directory, a shape this host has no applier for. Applying the rest
 * would leave a machine half way between two declarations, and the refused part held in the
 * store would be refused again on every pass.
 */
export function refuseWhole(resources: readonly Resource[], appliers: ApplierSet, ctx: ApplyContext, file: string): void {
  const refusals: string[] = [];
  for (const resource of resources) {
    const applier = applierFor(appliers, resource.shape);
    const why = applier === undefined ? `this host does not take ${resource.shape} resources` : applier.refuse?.(resource, ctx);
    if (why !== undefined) refusals.push(`${resourceKey(resource)}: ${why}`);
  }
  if (refusals.length === 0) return;
  throw new DeclarationRefused(`the declaration is refused whole, and nothing of it was applied or held: ${refusals.join('; ')}`, {
    value: file,
    next: `remove ${refusals.length === 1 ? 'that resource' : 'those resources'} from ${file} and run apply again`,
  });
}
