import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Subscription } from '@nats-io/transport-node';
import type { Declaration } from '../../../schema/declaration';
import { Heartbeat } from '../../../schema/heartbeat';
import { emptyHostState } from '../../../schema/host-state';
import { heartbeatSubject } from '../../shared/bus/subjects';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { startFreezeProxy, type FreezeProxy, type ProxiedConnection } from '../../shared/testing/freeze-proxy';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { FakeController, type ReportTap } from '../link/testing/fake-controller';
import { HostStore } from '../store/host-store';
import { hostWaits } from './testing/host-waits';

// The host as the service runs it (bin/nox-mesh-host run, a real process) linked to a real
// nats-server through a proxy that can freeze, refuse and cut, as a suspended laptop's network
// does. Rouses are real SIGUSR1s. What a rouse does is timed with the defaults (a new connection
// beside a silent one after 250 ms, two seconds for the old one to answer); the drift period is
// short so drift is corrected while the test watches, links settle after a second, heartbeats
// go every second, and the backoff runs from 100 ms to five seconds so a test can wait it out.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const NODE = 'roamer';
const TIMINGS = 'drift=1s heartbeat=1s settled_after=1s retry_first=100ms retry_cap=5s dead_link=60s';

let broker: TestBroker;
let proxy: FreezeProxy;
let controller: FakeController;
let root: string;
let host: ChildProcess;
let output = '';
let reports: ReportTap;
let exited: Promise<number | null>;
const heartbeats: Array<{ at: number; heartbeat: Heartbeat }> = [];
let heartbeatSubscription: Subscription;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const count = (pattern: RegExp, from = 0): number => output.slice(from).match(new RegExp(pattern.source, 'gm'))?.length ?? 0;
const links = (from = 0) => count(/^linked to tls:/, from);
const { until, said } = hostWaits(() => output, 10);
const fileOnMachine = (file: string) => fs.readFile(path.join(root, file), 'utf8').catch(() => undefined);
/** The host's connections through the proxy that are still open. */
const openConnections = () => proxy.open();

function motd(generation: number, text: string): Declaration {
  return {
    node: NODE,
    epoch: 3,
    generation,
    kind: 'full',
    issued_at: '2026-08-27T14:02:00Z',
    resources: [{ shape: 'file', path: '/etc/motd', content: { text }, mode: '0644', owner: 'root', group: 'root' }],
  };
}

/** Waits until the link has been up long enough to have settled, so its backoff starts from the first step. */
async function settledLink(): Promise<ProxiedConnection> {
  await until('a settled link', () => (/^linked to tls:/m.test(output) && openConnections().length === 1 && !openConnections()[0]!.frozen ? true : undefined));
  const [connection] = openConnections();
  const age = performance.now() - connection!.acceptedAt;
  if (age < 1_200) await pause(1_200 - age);
  return connection!;
}

beforeAll(async () => {
  await ready();
  broker = await startTestBroker({ dirPrefix: 'run-link test-broker' });
  proxy = await startFreezeProxy({ port: broker.port });
  controller = await FakeController.start(broker);
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'run-link-machine-'));
  const identity = generateNodeIdentity();
  await new HostStore(path.join(root, 'var/lib/mesh-host')).save({
    ...emptyHostState(),
    identity: { node: NODE, ...identity },
    pins: { broker_url: proxy.url, broker_fingerprint: broker.fingerprint, controller_public_key: controller.key.public_key },
  });
  await controller.admitNode(NODE, identity.nkey_public);
  reports = controller.reports(NODE);
  heartbeatSubscription = controller.connection.subscribe(heartbeatSubject(NODE), {
    callback: (error, message) => {
      if (error === null) heartbeats.push({ at: performance.now(), heartbeat: Heartbeat.parse(JSON.parse(new TextDecoder().decode(message.data))) });
    },
  });
  host = spawn(process.execPath, [bin, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MESH_HOST_TIMINGS: TIMINGS } });
  host.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  host.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  exited = new Promise((resolve) => host.once('exit', (code) => resolve(code)));
  await controller.declare(motd(1, 'first\n'));
  await reports.next((r) => r.generation === 1 && r.results.length > 0);
}, 30_000);

afterAll(async () => {
  if (host !== undefined && host.exitCode === null) host.kill('SIGKILL');
  heartbeatSubscription?.unsubscribe();
  await controller?.stop();
  await proxy?.close();
  await broker?.stop();
  await fs.rm(root, { recursive: true, force: true });
});

describe('nox-mesh-host run and its link, through a network that freezes', () => {
  test('a frozen link, roused, is replaced by a new connection, and the old one is closed', async () => {
    const old = await settledLink();
    const from = output.length;
    proxy.freeze();
    const started = performance.now();
    host.kill('SIGUSR1');
    await until('a new link', () => (links(from) === 1 ? true : undefined));
    const took = performance.now() - started;
    console.log(`rouse on a frozen link → linked again: ${Math.round(took)} ms`);
    await old.clientEnded;
    expect(output.slice(from)).toMatch(/^rouse: checking that the link still answers$/m);
    expect(output.slice(from)).toMatch(/the link did not answer the rouse, and a new connection was made beside it/);
    // Well inside the two-second liveness timeout: the new connection did not wait for it.
    expect(took).toBeLessThan(2_000);
    // The network comes back, so the broker hears that the old connection is gone; the new
    // link carries declarations. (Until the broker hears it, it may hand a declaration to the
    // old connection's pull, and the declaration comes again only after its ack wait.)
    proxy.restore();
    await controller.declare(motd(2, 'second\n'));
    await reports.next((r) => r.generation === 2 && r.results.length > 0);
    expect(await fileOnMachine('etc/motd')).toBe('second\n');
  });

  test('a rouse ends an attempt the network holds, and a new attempt links', async () => {
    await settledLink();
    proxy.admit('hold');
    const held = proxy.nextConnection();
    const from = output.length;
    proxy.cut();
    const stuck = await held;
    await pause(300);
    expect(stuck.clientClosed).toBe(false);
    proxy.admit('forward');
    const started = performance.now();
    host.kill('SIGUSR1');
    await until('a new link', () => (links(from) === 1 ? true : undefined));
    console.log(`rouse during a held attempt → linked again: ${Math.round(performance.now() - started)} ms`);
    await stuck.clientEnded;
    expect(output.slice(from)).toMatch(/^rouse: ended the attempt under way/m);
  });

  test('two SIGUSR1 within a few milliseconds cause one reconnection', async () => {
    await settledLink();
    const accepted = proxy.connections().length;
    const from = output.length;
    proxy.freeze();
    host.kill('SIGUSR1');
    host.kill('SIGUSR1');
    await until('a new link', () => (links(from) === 1 ? true : undefined));
    await pause(1_500);
    expect(links(from)).toBe(1);
    // One new connection: its certificate probe and the connection itself.
    expect(proxy.connections().length - accepted).toBe(2);
    expect(count(/^the link answered/, from)).toBe(0);
  });

  test('a rouse during a backoff wait does not shorten it, and the wait after it is not the first again', async () => {
    await settledLink();
    const from = output.length;
    proxy.admit('refuse');
    const before = proxy.refusals().length;
    proxy.cut();
    const attempts = () => proxy.refusals().slice(before);
    await until('three refused attempts', () => (attempts().length >= 3 ? true : undefined));
    host.kill('SIGUSR1');
    await until('five refused attempts', () => (attempts().length >= 5 ? true : undefined), 20_000);
    const [a, b, c, d, e] = attempts() as [number, number, number, number, number];
    const gaps = [b - a, c - b, d - c, e - d].map(Math.round);
    console.log(`waits between refused attempts (rouse after the third): ${gaps.join(', ')} ms`);
    expect(output.slice(from)).toMatch(/^rouse: waiting out the backoff, which a rouse does not shorten$/m);
    // Each ceiling doubles and the jitter takes off at most half, so a wait is never shorter
    // than the one before it; a rouse that ended the wait or reset the backoff would be.
    const slack = 40;
    expect(gaps[2]).toBeGreaterThanOrEqual(gaps[1]! - slack);
    expect(gaps[3]).toBeGreaterThanOrEqual(gaps[2]! - slack);
    // Four failures in, the wait is at least half of 100 ms · 2^3: far from the first step.
    expect(gaps[3]).toBeGreaterThanOrEqual(400 - slack);
    proxy.restore();
    await until('the link back', () => (links(from) === 1 ? true : undefined), 15_000);
  }, 40_000);

  test('cut off, it corrects drift on its own, and when the link returns it takes the declaration sent meanwhile, and says how long it was away', async () => {
    await settledLink();
    const declared = await fileOnMachine('etc/motd');
    const from = output.length;
    proxy.admit('refuse');
    proxy.cut();
    await said(/^the connection to the broker closed/m, from);
    // A person edits the managed file; the drift pass puts it back with no broker in reach.
    await fs.writeFile(path.join(root, 'etc/motd'), 'edited by hand\n');
    await said(/^pass \(drift\): 1 applied$/m, from);
    expect(await fileOnMachine('etc/motd')).toBe(declared);
    expect(links(from)).toBe(0);
    expect(openConnections()).toEqual([]);

    // Sent while the host cannot hear: the broker keeps it.
    await controller.declare(motd(3, 'third\n'));
    await pause(1_000);
    expect(await fileOnMachine('etc/motd')).toBe(declared);

    const reportsBefore = reports.received.length;
    const heartbeatsBefore = heartbeats.length;
    proxy.restore();
    const report = await reports.next((r) => reports.received.indexOf(r) >= reportsBefore && r.generation === 3 && r.results.length > 0, 20_000);
    expect(report.results).toEqual([expect.objectContaining({ key: 'file:/etc/motd', outcome: 'applied' })]);
    expect(await fileOnMachine('etc/motd')).toBe('third\n');
    const afterReturn = reports.received.slice(reportsBefore);
    expect(afterReturn.some((r) => (r.seconds_since_linked ?? 0) >= 1)).toBe(true);
    const heartbeat = await until('a heartbeat after the return', () => heartbeats.slice(heartbeatsBefore)[0]);
    expect(heartbeat.heartbeat).toMatchObject({ node: NODE, host_kind: 'resident', version_running: expect.any(String), last_reconcile_at: expect.any(String) });
    expect(heartbeat.heartbeat.seconds_since_linked).toBeGreaterThanOrEqual(1);
  }, 40_000);

  test('while linked it sends a heartbeat every period, each saying 0 after the first', async () => {
    await settledLink();
    const from = heartbeats.length;
    await pause(2_600);
    const recent = heartbeats.slice(from);
    expect(recent.length).toBeGreaterThanOrEqual(2);
    expect(recent.map((h) => h.heartbeat.seconds_since_linked)).toEqual(recent.map(() => 0));
    const gaps = recent.slice(1).map((h, i) => h.at - recent[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThan(700);
  });

  test('SIGTERM stops it with status 0, closing its connection', async () => {
    host.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until('its connection closed', () => (openConnections().length === 0 ? true : undefined));
  });
});
