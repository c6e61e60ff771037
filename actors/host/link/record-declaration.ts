import type { HostState } from '../../../schema/host-state';
import type { Admitted } from './admit-declaration';

/**
 * The store after taking an admitted declaration: it becomes the declaration held (kept as the
 * signed envelope, verified again whenever it is read), the epoch fence rises to its epoch, the
 * count of declarations taken goes up, and what a person applied by hand is dropped — the
 * controller's declaration supersedes a local repair, which only had to hold until it came.
 * Broker certificates it names become the pins (the first the current, a second the next); a
 * declaration naming none leaves the pins as they are. The servers of a cluster it names
 * (`broker_urls`) become the ones the link tries.
 */
export function recordDeclaration(state: HostState, admitted: Admitted): HostState {
  return {
    ...state,
    pins: serversAfter(pinsAfter(state.pins, admitted.declaration.broker_fingerprints), admitted.declaration.broker_urls),
    last_declaration: {
      envelope: admitted.envelope,
      applied_generation: admitted.declaration.generation,
      digest: admitted.digest,
    },
    highest_epoch: Math.max(state.highest_epoch, admitted.declaration.epoch),
    sequence: state.sequence + 1,
    local_resources: [],
  };
}

function pinsAfter(pins: HostState['pins'], fingerprints: readonly string[] | undefined): HostState['pins'] {
  if (pins === null || fingerprints === undefined) return pins;
  const [current, next] = fingerprints;
  if (current === undefined) return pins;
  const { next_broker_fingerprint: _dropped, ...rest } = pins;
  return { ...rest, broker_fingerprint: current, ...(next === undefined ? {} : { next_broker_fingerprint: next }) };
}

// A cluster's servers, as the controller names them now: the list is replaced whole, and
// the address the token gave stays first choice only while it is still one of them.
function serversAfter(pins: HostState['pins'], urls: readonly string[] | undefined): HostState['pins'] {
  if (pins === null || urls === undefined || urls.length === 0) return pins;
  return { ...pins, broker_url: urls.includes(pins.broker_url) ? pins.broker_url : (urls[0] as string), broker_urls: [...urls] };
}
