import type { NatsConnection } from '@nats-io/transport-node';
import type { ControllerService } from './service-ledger';

/**
 * The tree's `bus` child: watches the controller's connection to the broker. The connection
 * reconnects by itself for as long as the process runs, so this child fails only when it closed
 * for good (the broker refused the controller's credentials, or the connection was closed); a
 * restart finds it still closed and fails again, and once past its budget the root gives up and
 * the process exits naming `bus` and the connection's last error.
 */
export function busService(nc: NatsConnection, url: string): ControllerService {
  return {
    id: 'bus',
    needsLease: false,
    start: async () => {
      if (nc.isClosed()) throw new Error(`the connection to the broker at ${url} is closed and will not come back; start the controller again once the broker lets it in`);
      const failed = nc.closed().then((error) => {
        throw new Error(`the connection to the broker at ${url} closed${error instanceof Error ? ` (${error.message})` : ''} and will not come back`);
      });
      failed.catch(() => undefined);
      return { stop: async () => undefined, failed };
    },
  };
}
