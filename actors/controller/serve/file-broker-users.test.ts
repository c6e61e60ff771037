import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { BrokerUserDuplicate } from '../broker/broker-errors';
import type { Sql } from '../store/sql-store';
import { readBrokerUserList, writeBrokerUserList } from './broker-user-list';
import { FileBrokerUsers } from './file-broker-users';

/** A store that answers the two questions FileBrokerUsers.open asks, from fixed rows. */
function fakeStore(nodes: Array<{ name: string; nkey: string }>, openTokenIds: string[]): Sql {
  return {
    query: async <T>(sql: string) => (sql.includes('FROM nodes') ? nodes : openTokenIds.map((id) => ({ id }))) as T[],
    exec: async () => undefined,
  };
}

const controller = createUser().getPublicKey();
const operator = createUser().getPublicKey();
const password = 'p'.repeat(43);

describe('FileBrokerUsers', () => {
  let dir: string;
  let reloads: number;
  const reload = async (): Promise<void> => {
    reloads += 1;
  };

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh broker-users-'));
    reloads = 0;
    await writeBrokerUserList(dir, [
      { role: 'controller', nkey: controller },
      { role: 'operator', nkey: operator },
      { role: 'enrolment', token_id: '00000000000000aa', password },
    ]);
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const auth = (): Promise<string> => fs.readFile(path.join(dir, 'auth.conf'), 'utf8');

  test('starts from the store: an open token keeps its user, and nothing is reloaded when nothing changed', async () => {
    await FileBrokerUsers.open(fakeStore([], ['00000000000000aa']), new Date(), { brokerDir: dir, controllerNkey: controller, operatorNkey: operator, reload });
    expect(reloads).toBe(0);
    expect(await auth()).toContain('enrol-00000000000000aa');
  });

  test('starts from the store: a token used or expired while no controller ran loses its user, and a node gains one', async () => {
    const laptop = createUser().getPublicKey();
    const users = await FileBrokerUsers.open(fakeStore([{ name: 'laptop', nkey: laptop }], []), new Date(), { brokerDir: dir, controllerNkey: controller, operatorNkey: operator, reload });
    expect(reloads).toBe(1);
    expect(await auth()).not.toContain('enrol-00000000000000aa');
    expect(await auth()).toContain(laptop);
    expect((await readBrokerUserList(dir)).users).toEqual(users.users());
  });

  test('writes and reloads once per change, and not at all for a removal of a user that is not there', async () => {
    const users = await FileBrokerUsers.open(fakeStore([], ['00000000000000aa']), new Date(), { brokerDir: dir, controllerNkey: controller, operatorNkey: operator, reload });
    await users.addEnrolment('00000000000000bb', password);
    expect(await auth()).toContain('enrol-00000000000000bb');
    await users.removeEnrolment('00000000000000bb');
    await users.removeEnrolment('00000000000000bb');
    expect(await auth()).not.toContain('enrol-00000000000000bb');
    expect(reloads).toBe(2);
  });

  test('makes overlapping changes one after another, losing none', async () => {
    const users = await FileBrokerUsers.open(fakeStore([], []), new Date(), { brokerDir: dir, controllerNkey: controller, operatorNkey: operator, reload });
    const nodes = ['a', 'b', 'c', 'd'].map((name) => ({ name, nkey: createUser().getPublicKey() }));
    await Promise.all(nodes.map((node) => users.addNode(node.name, node.nkey)));
    const written = await auth();
    for (const node of nodes) expect(written).toContain(`# node ${node.name}`);
  });

  test('refuses a change the broker could not take, leaving the files and the list as they were', async () => {
    const users = await FileBrokerUsers.open(fakeStore([], []), new Date(), { brokerDir: dir, controllerNkey: controller, operatorNkey: operator, reload });
    const shared = createUser().getPublicKey();
    await users.addNode('a', shared);
    const before = await auth();
    await expect(users.addNode('b', shared)).rejects.toThrow(BrokerUserDuplicate);
    expect(await auth()).toBe(before);
    expect(users.users().filter((user) => user.role === 'node')).toHaveLength(1);
    // And the list keeps working afterwards.
    await users.removeNode('a');
    expect(await auth()).not.toContain('# node a');
  });
});
