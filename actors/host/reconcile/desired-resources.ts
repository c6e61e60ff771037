import { Declaration } from '../../../schema/declaration';
import type { HostState } from '../../../schema/host-state';
import { resourceKey, type Resource } from '../../../schema/resource';
import { openEnvelope } from '../../shared/crypto/envelope';
import { StoreInconsistent } from './store-inconsistent';

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
  const memo = typeof envelope === 'object' && envelope !== null ? envelope : undefined;
  const known = memo === undefined ? undefined : verified.get(memo);
  if (known !== undefined && known.key === key) return known.declaration;
  const declaration = openEnvelope(envelope, key, Declaration);
  if (memo !== undefined) verified.set(memo, { key, declaration });
  return declaration;
}

// Declarations already verified, by the envelope object the store holds in memory. What comes
// from the file is a new object, verified when it is first asked for; an object in this
// process's memory does not change under it, and a new declaration is a new object. Passes
// every ten minutes, and several asks per pass, then check a signature once per declaration.
const verified = new WeakMap<object, { key: string; declaration: Declaration }>();

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
