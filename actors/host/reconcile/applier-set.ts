import type { Resource, ResourceShape } from '../../../schema/resource';
import type { Applier } from '../appliers/applier';

/** The appliers a host has, one per shape it takes. A missing shape is refused, not guessed. */
export type ApplierSet = Partial<{ [S in ResourceShape]: Applier<Extract<Resource, { shape: S }>> }>;

/** The applier for a resource's shape, or undefined when this host does not take it. */
export function applierFor(set: ApplierSet, shape: ResourceShape): Applier | undefined {
  return set[shape] as Applier | undefined;
}
