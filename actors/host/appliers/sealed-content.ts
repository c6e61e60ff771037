import type { FileResource } from '../../../schema/resource';
import { ready } from '../../shared/crypto/sodium';
import { openSealed, SealedSecretUnopenable } from '../../shared/crypto/seal';
import type { ApplyContext } from './applier';
import { ApplyFailed } from './applier';

// The one place a file's content becomes bytes. Plain content is decoded; sealed content is
// opened with the node's key, in memory, each time the applier compares or writes the file, and
// dropped after. Nothing here keeps, logs or returns in an error the opened value: the store,
// the report and every message carry the sealed form or the secret's name, never its value.
//
// Drift is told by opening the box during the pass and comparing bytes, not by a digest the
// controller publishes: a plain hash of a short password is a dictionary attack away from the
// password, and the box itself is useless to anyone without the node's key.

/**
 * Why `resource` cannot be taken here, when its content names a secret the controller did not
 * resolve: a hand-applied file naming one is refused whole, before anything is written.
 */
export function unresolvedSecret(resource: FileResource): string | undefined {
  if (!('secret' in resource.content)) return undefined;
  return `${resource.path} names the secret ${JSON.stringify(resource.content.secret)}, which only the controller can seal to this node; put the file in a module (mesh-control module add) and assign it, or give its content as text here`;
}

/**
 * The bytes `resource` declares. A `{"secret": …}` content is a module's reference the controller
 * resolves at compose; reaching a host unresolved, it is refused (ApplyFailed), as is a box
 * that this node's key does not open: whole, nothing written.
 */
export async function fileContentBytes(resource: FileResource, ctx: ApplyContext): Promise<Buffer> {
  const { content } = resource;
  if ('text' in content) return Buffer.from(content.text, 'utf8');
  if ('base64' in content) return Buffer.from(content.base64, 'base64');
  if ('secret' in content) throw new ApplyFailed(unresolvedSecret(resource) ?? 'unreachable');
  const { secret, version, box } = content.sealed;
  if (ctx.openSealed === undefined) {
    throw new ApplyFailed(`${resource.path} holds the secret ${secret} (version ${version}) sealed to a node, and this host is not enrolled, so it has no key to open it; enrol it (nox-mesh-host enrol --token …) and let the controller send it`);
  }
  try {
    return Buffer.from(await ctx.openSealed(box));
  } catch (error) {
    if (error instanceof SealedSecretUnopenable) {
      throw new ApplyFailed(`${resource.path} was not written: the secret ${secret} (version ${version}) is refused whole, as ${error.what}; next: ${error.next}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Opens boxes sealed to the node whose Ed25519 seed `seedOf` gives (read when a box is opened,
 * so a re-enrolled identity is the one used). libsodium is loaded on the first box: a host that
 * holds no secret never loads it.
 */
export function sealedOpener(seedOf: () => string | undefined): (box: string) => Promise<Uint8Array> {
  return async (box) => {
    const seed = seedOf();
    if (seed === undefined) throw new SealedSecretUnopenable('this host has no identity yet');
    await ready();
    return openSealed(box, seed);
  };
}
