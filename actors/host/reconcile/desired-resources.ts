import { Declaration } from '../../../schema/declaration';
import type { HostState } from '../../../schema/host-state';
import { resourceKey, type Resource } from '../../../schema/resource';
import { openEnvelope } from '../../shared/crypto/envelope';
import { StoreInconsistent } from './store-inconsistent';
import { rememberVerified, verifiedBefore } from './verified-declarations';

export { StoreInconsistent } from './store-inconsistent';

/**
 * The last declaration in the store, verified again against the pinned controller key: the
 * store is a file, and a file is not a signature. Null when the host holds none (hosted).
 * Throws the envelope's own error (SignatureInvalid, ForeignSigner, …) when it does not verify.
 */
export function storedDeclaration(state: HostState): Declaration | null {
  if (state.last_declaration === null) return null;
  if (state.pins === null) {
    throw new StoreInconsistent('the host store holds a declaration but no controller key to verify it with', {
      next: 're-enrol this machine (nox-mesh-host enrol --token …) so the controller key is pinned again',
    });
  }
  const envelope = state.last_declaration.envelope;
  const key = state.pins.controller_public_key;
  const known = verifiedBefore(envelope, key);
  if (known !== undefined) return known;
  const declaration = openEnvelope(envelope, key, Declaration);
  if (typeof envelope === 'object' && envelope !== null) rememberVerified(envelope, key, declaration);
  return declaration;
}

/**
 * What the machine should hold now: the verified declaration's resources, with what a person
 * applied by hand since laid over them (a hand apply is the more recent intent, and lasts until
 * the next declaration arrives).
 */
export function desiredResources(state: HostState): Resource[] {
  const declared = storedDeclaration(state)?.resources ?? [];
  const local = new Map(state.local_resources.map((resource) => [resourceKey(resource), resource]));
  const merged = declared.map((resource) => local.get(resourceKey(resource)) ?? resource);
  const declaredKeys = new Set(declared.map(resourceKey));
  return [...merged, ...state.local_resources.filter((resource) => !declaredKeys.has(resourceKey(resource)))];
}
