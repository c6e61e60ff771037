import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nkeyAuthenticator } from '@nats-io/transport-node';
import type { RotationOutcome } from '../actors/controller/broker/rotate-broker-certificate';
import { connectPinnedAny, probeBrokerCertificate } from '../actors/shared/bus';
import { nkeySeedOf } from '../actors/shared/crypto/nkey';
import { nodeInboxPrefix } from '../actors/shared/bus/subjects';
import { ClusterRig } from './cluster-rig';
import { jsonOf, succeeded } from './run-cli';
import { done, notYet, until } from './until';

// Three servers that do not share a user list, as on three machines: the first server reads the
// mesh's own auth.conf (the acting controller's machine), the other two a copy of their own,
// kept by `mesh-control broker sync --server NAME`. A node enrolled while connected to the first
// server must then reach the third alone. Real processes: PostgreSQL, three nats-servers, one
// `mesh-control serve`, the syncs and one `nox-mesh-host`. Regression for issue 29: before the
// sync, a node enrolled on the controller's machine was refused by every other machine's server.
// Then, on the same rig, the broker certificate's switch on a cluster.

const NODE = 'a1';

describe('a node enrolled through one server of a cluster reaches the servers of other machines', () => {
  let rig: ClusterRig;
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh broker-sync '));
    rig = new ClusterRig({ dir, hosts: [NODE], controllers: 1, ownUserLists: true });
    await rig.start();
  }, 300_000);

  afterAll(async () => {
    await rig?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }, 120_000);

  /** Connects as the node, with its own key from its state file, to server `name` and no other. */
  async function connectOnlyTo(name: string): Promise<void> {
    const state = JSON.parse(await fs.readFile(path.join(rig.hostRoot(NODE), 'var', 'lib', 'mesh-host', 'state.json'), 'utf8')) as { identity: { node: string; secret_key: string } };
    const server = rig.servers.find((each) => each.name === name);
    const nc = await connectPinnedAny([server!.url], rig.init!.broker.fingerprint, {
      authenticator: nkeyAuthenticator(nkeySeedOf(state.identity.secret_key)),
      inboxPrefix: nodeInboxPrefix(state.identity.node),
      reconnect: false,
      timeout: 5000,
    });
    await nc.close();
  }

  it('is refused by a server whose sync is stopped, and let in once its sync runs', async () => {
    await rig.stopSync('s3');
    const token = await rig.issueToken();
    // The token names s1 first: the host enrols through it, the controller's machine.
    await until(`${NODE} to enrol`, async () => {
      const answer = await rig.hostCli(NODE, ['enrol', '--token', token.token, '--json']);
      if (answer.code === 0) return done(true);
      if (!answer.stdout.includes('"retryable":true')) succeeded(answer);
      return notYet(answer.stdout);
    }, { timeoutMs: 120_000, intervalMs: 2000 });

    // s2's sync applied the list the controller put in the bucket.
    await until(`${NODE} to be let in by s2 alone`, async () => {
      await connectOnlyTo('s2');
      return done(true);
    }, { timeoutMs: 30_000, intervalMs: 500 });
    // s3 reads a file of its own that nobody brought up to date: the rig does stand for three machines.
    await expect(connectOnlyTo('s3')).rejects.toThrow();

    await rig.startSync('s3');
    await until(`${NODE} to be let in by s3 alone`, async () => {
      await connectOnlyTo('s3');
      return done(true);
    }, { timeoutMs: 30_000, intervalMs: 500 });
    expect(await fs.readFile(path.join(rig.meshDir, 'broker', 'cluster', 's3', 'auth.conf'), 'utf8')).toContain(`# node ${NODE}`);
  }, 300_000);

  it('takes a revoked node away from every server', async () => {
    succeeded(await rig.control(['node', 'revoke', NODE, '--json']));
    for (const name of ['s2', 's3']) {
      await until(`${NODE} to be refused by ${name}`, async () => {
        try {
          await connectOnlyTo(name);
          return notYet('still let in');
        } catch {
          return done(true);
        }
      }, { timeoutMs: 30_000, intervalMs: 500 });
    }
  }, 120_000);

  it('switches every server of this machine to the next certificate, and refuses to finish while one still presents the old', async () => {
    const announced = jsonOf<RotationOutcome>(await rig.control(['broker', 'rotate-certificate', '--json']));
    const nextFingerprint = announced.next!.fingerprint;
    // s3 is down at the switch: nobody can say what it will present, so the nodes keep both pins.
    await rig.killServer('s3');
    const refused = await rig.control(['broker', 'rotate-certificate', '--switch', '--json']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain(rig.servers[2]!.url);
    await rig.startServer('s3');
    const switched = jsonOf<RotationOutcome>(await rig.control(['broker', 'rotate-certificate', '--switch', '--json']));
    expect(switched).toMatchObject({ stage: 'switched', current: { fingerprint: nextFingerprint } });
    for (const server of rig.servers) expect((await probeBrokerCertificate(server.url)).fingerprint).toBe(nextFingerprint);
  }, 180_000);
});
