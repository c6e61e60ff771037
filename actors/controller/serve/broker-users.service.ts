import type { LeasedBrokerUsers } from './leased-broker-users';
import type { ControllerService } from './service-ledger';

/**
 * The tree's `broker` child: once this controller holds the lease, opens the broker's user list
 * and brings the broker in line with the store (nodes as the store holds them, enrolment users
 * of open tokens only). A reload that fails is retried by the restart.
 */
export function brokerUsersService(users: LeasedBrokerUsers): ControllerService {
  return {
    id: 'broker',
    needsLease: true,
    start: async () => {
      await users.open();
      return { stop: async () => undefined };
    },
  };
}
