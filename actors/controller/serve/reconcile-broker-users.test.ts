import { createUser } from '@nats-io/nkeys';
import type { BrokerUser } from '../broker/auth-file';
import { reconcileBrokerUsers } from './reconcile-broker-users';

const controller = createUser().getPublicKey();
const operator = createUser().getPublicKey();
const laptopKey = createUser().getPublicKey();
const stolenKey = createUser().getPublicKey();

describe('reconcileBrokerUsers', () => {
  const previous: BrokerUser[] = [
    { role: 'controller', nkey: createUser().getPublicKey() },
    { role: 'node', node: 'laptop', nkey: stolenKey },
    { role: 'node', node: 'retired', nkey: createUser().getPublicKey() },
    { role: 'enrolment', token_id: '00000000000000aa', password: 'a'.repeat(43) },
    { role: 'enrolment', token_id: '00000000000000bb', password: 'b'.repeat(43) },
  ];

  const users = reconcileBrokerUsers(previous, {
    controllerNkey: controller,
    operatorNkey: operator,
    nodes: [{ name: 'laptop', nkey: laptopKey }],
    openTokenIds: new Set(['00000000000000aa']),
  });

  test('lets in this controller and the operator from mesh.json, and no controller key of before', () => {
    expect(users.filter((user) => user.role === 'controller')).toEqual([{ role: 'controller', nkey: controller }]);
    expect(users.filter((user) => user.role === 'operator')).toEqual([{ role: 'operator', nkey: operator }]);
  });

  test('gives each node the key the store holds, so one revoked while the controller was down stays out', () => {
    expect(users.filter((user) => user.role === 'node')).toEqual([{ role: 'node', node: 'laptop', nkey: laptopKey }]);
  });

  test('keeps the users of open tokens only', () => {
    expect(users.filter((user) => user.role === 'enrolment').map((user) => (user as { token_id: string }).token_id)).toEqual(['00000000000000aa']);
  });
});
