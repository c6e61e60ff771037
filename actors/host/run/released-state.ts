import type { HostState } from '../../../schema/host-state';

/**
 * The store after the node was released by a final declaration: no identity, no pins, no
 * declaration, no fences — the machine is `hosted` again and any mesh may enrol it. What the
 * host still owns (a removal that failed) stays recorded, so it is still the host's to remove;
 * the counters and the known-good version are kept.
 */
export function releasedState(state: HostState): HostState {
  return {
    ...state,
    identity: null,
    pins: null,
    last_declaration: null,
    highest_epoch: 0,
    last_linked_at: null,
  };
}
