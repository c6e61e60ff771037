import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, nkeyAuthenticator, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { generateNodeIdentity, generateSigningKeyPair, nkeyPublicOf, nkeySeedOf, ready } from '../../shared/crypto';
import { BROKER_SYNC_INBOX_PREFIX } from '../../shared/bus/subjects';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { renderAuthFile, writeAuthFile, type BrokerUser } from './auth-file';
import { brokerPaths } from './broker-paths';
import { BROKER_USERS_KEY } from './broker-users-bucket-name';
import { encodeBrokerUsers, openBrokerUsersBucket } from './broker-users-bucket';
import { BrokerUsersPublisher } from './broker-users-publisher';
import { applyBrokerUsers, bindBrokerUsersBucket, BrokerUsersRefused, type BrokerSyncTarget } from './sync-broker-users';

// The sync's half of "users on every server": what its own broker user may do (read the bucket,
// nothing else), and what it refuses to apply. A real nats-server; the reload is counted by a
// small fake, since the broker whose list is applied here is a file in a temporary directory.

describe('broker sync', () => {
  let broker: TestBroker;
  let controller: NatsConnection;
  let sync: NatsConnection;
  let syncNkey: string;
  let dir: string;
  let base: BrokerUser[];

  beforeAll(async () => {
    await ready();
    broker = await startTestBroker({ dirPrefix: 'mesh broker-sync' });
    const pair = generateSigningKeyPair();
    syncNkey = nkeyPublicOf(pair.public_key);
    base = [{ role: 'controller', nkey: broker.controllerNkey }, { role: 'sync', nkey: syncNkey }];
    await writeAuthFile(brokerPaths(broker.dir).authFile, base);
    await broker.reload();
    controller = await broker.connectAsController();
    sync = await connect({ servers: broker.url, tls: { ca: broker.certPem }, authenticator: nkeyAuthenticator(nkeySeedOf(pair.secret_key)), inboxPrefix: BROKER_SYNC_INBOX_PREFIX });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh broker-sync target '));
  }, 60_000);

  afterAll(async () => {
    await sync?.close();
    await broker?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  function target(reloads: string[]): BrokerSyncTarget {
    return { brokerDir: dir, authFile: path.join(dir, 'auth.conf'), syncNkey, reload: async () => void reloads.push('reload') };
  }

  it('applies a new revision once: writes auth.conf and users.json, and reloads', async () => {
    const node = generateNodeIdentity();
    const users: BrokerUser[] = [...base, { role: 'node', node: 'web-1', nkey: node.nkey_public }];
    const publisher = new BrokerUsersPublisher(async () => (await openBrokerUsersBucket(controller, 1)).kv, () => undefined);
    publisher.offer(users);
    await publisher.settled();
    const kv = await bindBrokerUsersBucket(sync);
    const reloads: string[] = [];
    const first = await applyBrokerUsers(kv, target(reloads), undefined);
    expect(first).toMatchObject({ kind: 'applied', nodes: 1, tokens: 0 });
    expect(await fs.readFile(path.join(dir, 'auth.conf'), 'utf8')).toBe(renderAuthFile(users));
    expect(JSON.parse(await fs.readFile(path.join(dir, 'users.json'), 'utf8'))).toEqual({ format: 1, users });
    expect(reloads).toEqual(['reload']);
    // The same revision again changes nothing, even when the file was written over meanwhile
    // (the acting controller's own newer file must not be replaced by the bucket's older list).
    await fs.writeFile(path.join(dir, 'auth.conf'), 'newer, by the controller\n');
    expect(await applyBrokerUsers(kv, target(reloads), first.kind === 'applied' ? first.revision : 0)).toMatchObject({ kind: 'unchanged' });
    expect(reloads).toEqual(['reload']);
  });

  it('refuses a list without its own user, and one with an entry renderAuthFile refuses, leaving the file as it was', async () => {
    const kv = await new Kvm(jetstream(controller)).open('mesh-broker_users');
    const reloads: string[] = [];
    await fs.writeFile(path.join(dir, 'auth.conf'), 'as it was\n');
    await kv.put(BROKER_USERS_KEY, encodeBrokerUsers([{ role: 'controller', nkey: broker.controllerNkey }]));
    const bound = await bindBrokerUsersBucket(sync);
    await expect(applyBrokerUsers(bound, target(reloads), undefined)).rejects.toThrow(BrokerUsersRefused);
    await kv.put(BROKER_USERS_KEY, encodeBrokerUsers([...base, { role: 'node', node: 'web-1\n}\nevil', nkey: generateNodeIdentity().nkey_public }]));
    await expect(applyBrokerUsers(bound, target(reloads), undefined)).rejects.toThrow(/is refused: .*node name/);
    expect(await fs.readFile(path.join(dir, 'auth.conf'), 'utf8')).toBe('as it was\n');
    expect(reloads).toEqual([]);
  });

  it('may read the bucket and nothing else: no write to it, no other bucket, no mesh subject', async () => {
    const violations: string[] = [];
    void (async () => {
      for await (const status of sync.status()) if (status.type === 'error' && status.error instanceof PermissionViolationError) violations.push(status.error.subject);
    })();
    const kv = await bindBrokerUsersBucket(sync, 2000);
    await expect(kv.put(BROKER_USERS_KEY, encodeBrokerUsers(base))).rejects.toThrow();
    await (await openBrokerUsersBucket(controller, 1)).kv.put(BROKER_USERS_KEY, encodeBrokerUsers(base));
    const lease = await new Kvm(jetstream(controller)).create('mesh-sync-test-other');
    await lease.put('holder', 'someone');
    const other = await new Kvm(jetstream(sync, { timeout: 2000, checkAPI: false })).open('mesh-sync-test-other');
    await expect(other.get('holder')).rejects.toThrow();
    sync.subscribe('mesh.>');
    await sync.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(violations).toEqual(expect.arrayContaining(['$KV.mesh-broker_users.list', '$JS.API.STREAM.MSG.GET.KV_mesh-sync-test-other', 'mesh.>']));
  });
});
