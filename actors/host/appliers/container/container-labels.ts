import type { ContainerResource } from '../../../../schema/resource';
import { resourceDigest } from '../../../../schema/resource';

/** The label that marks a container as the host's: only a container carrying it is ever removed. */
export const OWNER_LABEL = 'mesh.owner';
/** The value of {@link OWNER_LABEL} on the host's containers. */
export const OWNER = 'nox-mesh-host';
/**
 * The label carrying the digest of the declaration a container was created from. A change the
 * inspect record cannot show (an environment variable no longer declared) still shows here.
 */
export const DIGEST_LABEL = 'mesh.resource-digest';

/** The labels the host puts on a container it creates for `resource`. */
export function hostLabels(resource: ContainerResource): Record<string, string> {
  return { [OWNER_LABEL]: OWNER, [DIGEST_LABEL]: resourceDigest(resource) };
}

/** True when the container was created by the host (it carries the owner label). */
export function isHostContainer(labels: Record<string, string>): boolean {
  return labels[OWNER_LABEL] === OWNER;
}
