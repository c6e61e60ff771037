import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { FakeController, type ReportTap } from '../link/testing/fake-controller';
import { HostStore } from '../store/host-store';
import { hostWaits } from './testing/host-waits';

// A node that was already enrolled when its host started: what was sent while it was away
// waits for it on the broker, a lost connection comes back with a pass and a report, and
// stopping it lets go of everything it held.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const NODE = 'away';

let broker: TestBroker;
let controller: FakeController;
let root: string;
let stateDir: string;
let host: ChildProcess;
let output = '';
let reports: ReportTap;
let exited: Promise<number | null>;
let nkey = '';

const { said } = hostWaits(() => output);

beforeAll(async () => {
  await ready();
  broker = await startTestBroker({ dirPrefix: 'run-enrolled test-broker' });
  controller = await FakeController.start(broker);
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'run-enrolled-machine-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
  const identity = generateNodeIdentity();
  nkey = identity.nkey_public;
  await new HostStore(stateDir).save({
    ...emptyHostState(),
    identity: { node: NODE, ...identity },
    pins: { broker_url: broker.url, broker_fingerprint: broker.fingerprint, controller_public_key: controller.key.public_key },
  });
  await controller.admitNode(NODE, nkey);
  reports = controller.reports(NODE);
});
afterAll(async () => {
  if (host !== undefined && host.exitCode === null) host.kill('SIGKILL');
  await controller?.stop();
  await broker?.stop();
  await fs.rm(root, { recursive: true, force: true });
});

describe('nox-mesh-host run on a node that is already enrolled', () => {
  test('takes the declaration that was sent while it was not running', async () => {
    await controller.declare({
      node: NODE, epoch: 2, generation: 1, kind: 'full', issued_at: '2026-08-27T14:02:00Z',
      resources: [{ shape: 'directory', path: '/srv/waiting', mode: '0750', owner: 'root', group: 'root' }],
    });
    host = spawn(process.execPath, [bin, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    host.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    host.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    exited = new Promise((resolve) => host.once('exit', (code) => resolve(code)));

    const report = await reports.next((r) => r.generation === 1 && r.results.length > 0);
    expect(report.results).toEqual([expect.objectContaining({ key: 'directory:/srv/waiting', outcome: 'applied' })]);
    expect((await fs.stat(path.join(root, 'srv/waiting'))).mode & 0o777).toBe(0o750);
    expect(await fs.readFile(path.join(stateDir, 'host.lock'), 'utf8')).toBe(`${host.pid}\n`);
  });

  test('when the broker drops it and lets it back in, it links again, reconciles and reports', async () => {
    const from = output.length;
    const before = reports.received.length;
    await broker.removeUser({ node: NODE });
    await said(/lost the broker|the connection to the broker closed/, from);
    await broker.addNodeUser(NODE, nkey);
    await said(/reached the broker again|linked to tls:/, from);
    const report = await reports.next((r) => reports.received.indexOf(r) >= before);
    expect(report.generation).toBe(1);
    expect(report.results).toEqual([expect.objectContaining({ key: 'directory:/srv/waiting', outcome: 'unchanged' })]);
    expect(report.seconds_since_linked).toEqual(expect.any(Number));
  });

  test('SIGTERM while enrolled stops it with status 0, releasing the store lock and the pidfile', async () => {
    host.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fs.stat(path.join(stateDir, 'host.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(path.join(stateDir, 'host.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
    const state = (await new HostStore(stateDir).load()).state;
    expect(state.identity?.node).toBe(NODE);
    expect(state.last_linked_at).not.toBeNull();
  });
});
