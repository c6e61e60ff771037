import type { HostIdentity, HostPins, HostState } from '../../../schema/host-state';

/**
 * The store after an enrolment succeeded: the new identity and pins. What the host owns stays
 * its own (it is still this machine's work, and removal of it must keep working), and so do the
 * counters and the known-good version.
 *
 * The declaration held is kept only when the machine enrolled again as the same node of the
 * same mesh (same controller key): it is still that node's declaration, and keeping it keeps
 * the generation fence, so an old declaration cannot be replayed into the new identity. As
 * another node, or under another controller key, it is dropped (it could not even be verified
 * against the new key), and the host holds the machine as it is until the first declaration
 * arrives. The epoch fence belongs to a controller key: it starts again under a new one.
 * `at` (when the enrolment happened) marks an empty store as rebuilt; without it, nothing is.
 */
export function enrolledState(state: HostState, identity: HostIdentity, pins: HostPins, at?: string): HostState {
  const sameMesh = state.pins !== null && state.pins.controller_public_key === pins.controller_public_key;
  const sameNode = sameMesh && state.identity !== null && state.identity.node === identity.node;
  // An empty store is marked as rebuilt, so the next full declaration may hand back what the
  // node owned; a mark left by an enrolment as this same node that was not followed by one
  // stays (enrolling again before it came does not make the store any less lost).
  const rebuilt = isBlank(state) && at !== undefined ? at : sameNode ? state.store_rebuilt_at : undefined;
  const { store_rebuilt_at: _dropped, ...rest } = state;
  return {
    ...rest,
    identity,
    pins,
    last_declaration: sameNode ? state.last_declaration : null,
    highest_epoch: sameMesh ? state.highest_epoch : 0,
    last_linked_at: null,
    ...(rebuilt === undefined ? {} : { store_rebuilt_at: rebuilt }),
  };
}

/**
 * True for a store that holds nothing of this machine: no identity, no declaration, nothing
 * owned, made, marked, applied by hand or adopted. Only such a store is rebuilt; one that holds
 * anything is the node's own word on what it owns.
 */
export function isBlank(state: HostState): boolean {
  return state.identity === null && state.pins === null && state.last_declaration === null
    && state.owned.resources.length === 0 && state.applying.length === 0 && state.made_directories.length === 0
    && state.local_resources.length === 0 && state.briefing === null;
}
