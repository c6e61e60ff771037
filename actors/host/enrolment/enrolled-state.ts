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
 */
export function enrolledState(state: HostState, identity: HostIdentity, pins: HostPins): HostState {
  const sameMesh = state.pins !== null && state.pins.controller_public_key === pins.controller_public_key;
  const sameNode = sameMesh && state.identity !== null && state.identity.node === identity.node;
  return {
    ...state,
    identity,
    pins,
    last_declaration: sameNode ? state.last_declaration : null,
    highest_epoch: sameMesh ? state.highest_epoch : 0,
    last_linked_at: null,
  };
}
