import type { NatsConnection } from '@nats-io/transport-node';
import { BrokerUnreachable } from './bus-errors';
import { connectPinned, type ConnectPinnedOptions, type PinnedNatsOptions } from './connect-pinned';

/**
 * Connects to the first server of `urls` that answers, pinned as connectPinned pins, with the
 * others given to the client for its own reconnections: a long-lived connection (a serving
 * controller's) that rides out the loss of the server it is on. A server that cannot be reached
 * is passed over; any other failure (a certificate that is not pinned, credentials refused)
 * ends the search, since the next server would say the same. When none answers, the last
 * BrokerUnreachable is thrown.
 */
export async function connectPinnedAny(
  urls: readonly string[],
  pinnedFingerprints: string | readonly string[],
  natsOptions: PinnedNatsOptions = {},
  options: ConnectPinnedOptions = {},
): Promise<NatsConnection> {
  if (urls.length === 0) throw new TypeError('connectPinnedAny needs at least one broker address');
  let last: unknown;
  for (const url of urls) {
    try {
      return await connectPinned(url, pinnedFingerprints, natsOptions, { ...options, alsoServers: urls });
    } catch (error) {
      if (!(error instanceof BrokerUnreachable)) throw error;
      last = error;
    }
  }
  throw last;
}
