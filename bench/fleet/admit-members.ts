import { writeAuthFile, type BrokerUser } from '../../actors/controller/broker/auth-file';
import { brokerPaths } from '../../actors/controller/broker/broker-paths';
import type { TestBroker } from '../../tests/broker/test-broker';
import type { FleetMember } from './fleet-member';

/**
 * Lets every member into a test broker at once: the user list is written whole by the
 * controller's own renderer (renderAuthFile: each node user with its nkey and a node's
 * permissions) and the broker reloaded once, as a controller restarting over a fleet does. One
 * reload per node, as enrolment does it, would take minutes for thousands of nodes; that cost
 * belongs to enrolment, not to the push being measured.
 */
export async function admitMembers(broker: TestBroker, members: readonly FleetMember[]): Promise<void> {
  const users: BrokerUser[] = [
    { role: 'controller', nkey: broker.controllerNkey },
    ...members.map((member): BrokerUser => ({ role: 'node', node: member.name, nkey: member.identity.nkey_public })),
  ];
  await writeAuthFile(brokerPaths(broker.dir).authFile, users);
  await broker.reload();
}
