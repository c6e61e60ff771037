import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RotationOutcome } from '../actors/controller/broker/rotate-broker-certificate';
import type { HostStatus } from '../actors/host/run/host-status';
import type { ControllerStatus } from '../schema/controller-status';
import { MeshRig } from './mesh-rig';
import { jsonOf } from './run-cli';
import { done, notYet, until } from './until';

// The broker's certificate rotated under a running mesh, every part a real process (nats-server
// with TLS, mesh-control serve, nox-mesh-host run): the next certificate is announced in signed
// declarations, the broker switches, and a host that was linked throughout keeps working with
// no enrolment; a host stopped across the rotation comes back to a certificate it does not pin
// and says what to do, and doing it brings it back. MESH_E2E_KEEP keeps the directory.

const TIMINGS = {
  MESH_HOST_TIMINGS: 'heartbeat=300ms',
  MESH_CONTROLLER_TIMINGS: 'presence=200ms heartbeat_resident=1s',
};

describe('rotating the broker certificate under enrolled hosts', () => {
  let parent: string;
  let rig: MeshRig;

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-rotate-'));
    rig = new MeshRig({ dir: parent, hosts: ['a', 'b'], env: TIMINGS });
    await rig.start();
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  const status = async (what: string, look: (status: ControllerStatus) => boolean): Promise<ControllerStatus> =>
    until(`status to show ${what}`, async () => {
      const now = jsonOf<ControllerStatus>(await rig.control(['status', '--json']));
      return look(now) ? done(now) : notYet(JSON.stringify(now.broker_certificate));
    }, { intervalMs: 500, timeoutMs: 90_000 });

  test('a linked host keeps working across the switch, and one away across it is told what to do', async () => {
    for (const name of ['a', 'b']) {
      await rig.enrol(name, (await rig.issueToken({ new: true })).token);
      await rig.host(name).waitFor(/took declaration generation/);
    }
    const old = rig.init?.broker.fingerprint ?? '';
    await status('both nodes pinning the broker certificate', (now) => now.broker_certificate?.fingerprint === old && now.broker_certificate.pins_unknown.length === 0);

    // b is away for the whole rotation.
    await rig.stopHost('b');
    const a = rig.host('a');
    const fromA = a.mark();

    const announced = jsonOf<RotationOutcome>(await rig.control(['broker', 'rotate-certificate', '--json']));
    expect(announced).toMatchObject({ stage: 'announced', made: true, current: { fingerprint: old } });
    const next = announced.next?.fingerprint ?? '';
    expect(next).toMatch(/^[0-9a-f]{64}$/);
    expect(next).not.toBe(old);
    expect(announced.sent.map((sent) => sent.node).sort()).toEqual(['a', 'b']);
    await a.waitFor(new RegExp(`broker certificate: this node now pins sha256 ${old} and the next certificate, sha256 ${next}`), { from: fromA, timeoutMs: 30_000 });
    const during = await status('a pinning the next certificate and b not', (now) =>
      now.broker_certificate?.next?.fingerprint === next && now.broker_certificate.pinning_only_old.map((entry) => entry.node).join() === 'b');
    expect(during.broker_certificate?.fingerprint).toBe(old);
    expect(Date.parse(during.broker_certificate?.next?.expires_at ?? '')).toBeGreaterThan(Date.now() + 365 * 86_400_000);

    // A careless switch is refused, naming the node it would cut off; nothing changes.
    const refused = await rig.control(['broker', 'rotate-certificate', '--switch']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/1 node do not pin the next broker certificate[\s\S]*b \(pins sha256 [0-9a-f]{64}\)[\s\S]*--force/);
    expect((await rig.control(['broker', 'rotate-certificate', '--force'])).code).toBe(1);

    const switched = jsonOf<RotationOutcome>(await rig.control(['broker', 'rotate-certificate', '--switch', '--force', '--json']));
    expect(switched).toMatchObject({ stage: 'switched', current: { fingerprint: next }, next: null });
    expect(switched.behind.map((entry) => entry.node)).toEqual(['b']);
    await a.waitFor(new RegExp(`broker certificate: this node now pins sha256 ${next} alone`), { from: fromA, timeoutMs: 30_000 });
    const mesh = JSON.parse(await fs.readFile(path.join(rig.meshDir, 'mesh.json'), 'utf8')) as { broker: { fingerprint: string } };
    expect(mesh.broker.fingerprint).toBe(next);

    // The broker restarted on its new certificate drops every connection: a links again in the
    // same process, as the same node, and the controller too (it takes a new declaration).
    const beforeRestart = a.mark();
    await rig.restartBroker();
    await a.waitFor(/linked to \S+ as node a/, { from: beforeRestart, timeoutMs: 60_000 });
    const file = path.join(parent, 'after-switch.json');
    await fs.writeFile(file, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/after-switch.conf', content: { text: 'still managed\n' } }] }));
    // The controller links again on its own backoff, which may come after the host's: until it
    // has, a declaration is refused as unanswered, and said so.
    await until('the controller to take a declaration after the restart', async () => {
      const result = await rig.control(['node', 'declare', 'a', file]);
      if (result.code === 0) return done(true);
      if (/no controller answered/.test(result.stderr)) return notYet(result.stderr);
      throw new Error(`\`${result.command}\` exited with status ${result.code}:\n${result.stderr}`);
    }, { timeoutMs: 60_000 });
    await until('a to apply a declaration sent after the switch', async () => {
      const text = await fs.readFile(path.join(rig.hostRoot('a'), 'etc', 'after-switch.conf'), 'utf8').catch(() => undefined);
      return text === 'still managed\n' ? done(text) : notYet(String(text));
    }, { timeoutMs: 60_000 });
    expect(a.running).toBe(true);
    expect(a.output().slice(fromA)).not.toMatch(/certificate not pinned/);
    const after = await status('b alone pinning only the old certificate', (now) =>
      now.broker_certificate?.fingerprint === next && now.broker_certificate.next === null && now.broker_certificate.pinning_only_old.map((entry) => entry.node).join() === 'b');
    expect(after.broker_certificate?.pinning_only_old[0]?.pins).toEqual([old]);
    expect((await rig.control(['status'])).stdout).toMatch(/^broker certificate: .*pinning only the old one: b \(enrol each again: mesh-control token issue --node NAME\)/m);

    // b comes back to a certificate it never pinned: it sends nothing and says what to do.
    const b = await rig.startHost('b');
    await b.waitFor(/^certificate not pinned: the broker at \S+ presents certificate sha256 [0-9a-f]{64}, which node b does not pin/m, { timeoutMs: 30_000 });
    expect(b.output()).toMatch(/on the controller run mesh-control token issue --node b, then on this machine stop the host, run nox-mesh-host enrol --token TOKEN, and start the host again/);
    const unpinned = await until('b\'s status file to say it', async () => {
      const text = await fs.readFile(path.join(rig.hostStateDir('b'), 'host-status.json'), 'utf8').catch(() => '{}');
      const parsed = JSON.parse(text) as Partial<HostStatus>;
      return parsed.certificate_unpinned !== undefined ? done(parsed.certificate_unpinned) : notYet(text);
    });
    expect(unpinned).toMatchObject({ presented: next, pinned: [old] });
    const said = await rig.hostCli('b', ['status']);
    expect(said.code).toBe(5);
    expect(said.stdout).toMatch(/^certificate\s+not pinned since \S+: the broker at/m);

    // Doing what it says brings b back.
    await rig.stopHost('b');
    await rig.enrol('b', (await rig.issueToken({ node: 'b' })).token);
    const back = await rig.startHost('b');
    await back.waitFor(/linked to \S+ as node b/, { timeoutMs: 30_000 });
    await status('no node pinning only the old certificate', (now) => now.broker_certificate?.pinning_only_old.length === 0 && now.broker_certificate.pins_unknown.length === 0);
  }, 300_000);
});
