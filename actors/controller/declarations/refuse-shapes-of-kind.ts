import { resourceKey, SHAPES_FOR_HOST_KIND, type Resource } from '../../../schema/resource';
import type { Profile } from '../../../schema/profile';
import { ShapeNotTakenByNode } from './declaration-errors';

/**
 * Refuses, before anything is recorded, resources whose shape the node's kind of host does not
 * take (SHAPES_FOR_HOST_KIND): the host would refuse the whole declaration on arrival, and the
 * operator would learn it only from a refusal report. A node whose profile is not known yet is
 * let through; its host still checks.
 */
export function refuseShapesOfKind(node: string, profile: Pick<Profile, 'host_kind'> | null, resources: readonly Resource[], nothingDone: string): void {
  if (profile === null) return;
  const taken: readonly string[] = SHAPES_FOR_HOST_KIND[profile.host_kind];
  const refused = resources.filter((resource) => !taken.includes(resource.shape)).map(resourceKey);
  if (refused.length > 0) throw new ShapeNotTakenByNode(node, profile.host_kind, refused, taken, nothingDone);
}
