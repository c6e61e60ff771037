import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Declaration } from '../../../schema/declaration';
import type { Envelope } from '../../../schema/envelope';
import type { HostState } from '../../../schema/host-state';
import type { Report } from '../../../schema/report';
import { generateSigningKeyPair, sealEnvelope } from '../../shared/crypto';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { EnrolCommand } from '../cli/enrol.command';
import { StatusCommand } from '../cli/status.command';
import { TreeCommand } from '../cli/tree.command';
import { FakeController, type ReportTap } from '../link/testing/fake-controller';
import { runVerb } from '../profile/testing/cli-harness';
import { listeningSockets, socketsOf } from './testing/process-sockets';
import { hostWaits } from './testing/host-waits';

// The host as the service runs it: bin/nox-mesh-host run in a real process over a temporary
// root, a real nats-server with TLS, and the controller's part played by the test. The tests
// follow one machine through its life, in order: hosted, enrolled, declarations taken and
// refused, released.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
const NODE = 'runner';

let broker: TestBroker;
let controller: FakeController;
let root: string;
let stateDir: string;
let host: ChildProcess;
let output = '';
let reports: ReportTap;
let exited: Promise<number | null>;
let enrolledWith = '';


const { said, until } = hostWaits(() => output);
const fileOnMachine = (file: string) => fs.readFile(path.join(root, file), 'utf8').catch(() => undefined);
const storeNow = async (): Promise<HostState> => JSON.parse(await fs.readFile(path.join(stateDir, 'state.json'), 'utf8')) as HostState;

// The first declaration is the overlay: this node's address and the WireGuard key it published.
function overlayDeclaration(generation: number, epoch: number, text: string): Declaration {
  const published = controller.enrolments.find((e) => e.request.token_id === enrolledWith)?.request.wireguard_public_key;
  return declaration(generation, epoch, text, {
    kind: 'overlay',
    overlay: { address: '10.77.0.5/32', public_key: published!, peers: [], names: [{ name: 'runner.mesh', address: '10.77.0.5' }] },
  });
}

function declaration(generation: number, epoch: number, text: string, more: Partial<Declaration> = {}): Declaration {
  return {
    node: NODE,
    epoch,
    generation,
    kind: 'full',
    issued_at: '2026-08-27T14:02:00Z',
    resources: [{ shape: 'file', path: '/etc/motd', content: { text }, mode: '0644', owner: 'root', group: 'root' }],
    ...more,
  };
}

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'run test-broker' });
  controller = await FakeController.start(broker);
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'run-machine-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
  reports = controller.reports(NODE);
  host = spawn(process.execPath, [bin, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  host.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  host.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  exited = new Promise((resolve) => host.once('exit', (code) => resolve(code)));
});
afterAll(async () => {
  if (host.exitCode === null) host.kill('SIGKILL');
  await controller?.stop();
  await broker?.stop();
  await fs.rm(root, { recursive: true, force: true });
});

describe('nox-mesh-host run, as a real process', () => {
  test('while hosted it holds no lock, so enrol runs beside it; then it takes the identity and links as the node', async () => {
    await said(/^hosted: this machine has no identity yet/m);
    expect(await fs.readFile(path.join(stateDir, 'host.pid'), 'utf8')).toBe(`${host.pid}\n`);
    const hosted = await runVerb([StatusCommand], ['status', '--root', root, '--json']);
    expect(JSON.parse(hosted.stdout)).toMatchObject({ running: true, pid: host.pid, lifecycle: 'hosted', node: null, tree: null });
    expect((await runVerb([TreeCommand], ['tree', '--root', root])).stdout).toMatch(/^no tree: the host \(process \d+\) is hosted, waiting to be enrolled$/m);

    const token = await controller.issueToken();
    enrolledWith = token.token_id;
    controller.answerEnrolment(token.token_id, () => ({ ok: true, node: NODE }));
    const enrolled = await runVerb([EnrolCommand], ['enrol', '--token', token.text, '--root', root]);
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    const state = await storeNow();
    await controller.admitNode(NODE, state.identity!.nkey_public);

    await said(/^enrolled as node runner; reaching the broker/m);
    await said(/^linked to tls:\/\/127\.0\.0\.1:\d+ as node runner$/m);
  });

  test('applies a declaration from its queue, and reports the results and what it now owns', async () => {
    await controller.declare(overlayDeclaration(1, 5, 'first\n'));
    const report = await reports.next((r) => r.generation === 1 && r.results.length > 0);

    expect(await fileOnMachine('etc/motd')).toBe('first\n');
    expect(report.results).toEqual([expect.objectContaining({ key: 'file:/etc/motd', outcome: 'applied' })]);
    expect(report.owned.resources.map((r) => r.key)).toEqual(['file:/etc/motd']);
    expect(report).toMatchObject({ node: NODE, epoch: 5, sequence: 1, version_running: expect.any(String) });
    const state = await storeNow();
    expect(state.last_declaration?.applied_generation).toBe(1);
    expect(state.last_declaration?.digest).toBe(report.declaration_digest);
    expect(report.report_sequence).toBeLessThanOrEqual(state.report_sequence);
  });

  test('status and tree show the running node from its status file: lifecycle, link, last pass, last declaration, and its actors', async () => {
    const status = await until('the status to show the pass over generation 1', async () => {
      const shown = await runVerb([StatusCommand], ['status', '--root', root, '--json']);
      const parsed = JSON.parse(shown.stdout) as { last_pass: { counts: Record<string, number> } | null; last_declaration: { generation: number } | null };
      return shown.code === 0 && parsed.last_declaration?.generation === 1 && parsed.last_pass !== null ? parsed : undefined;
    });
    expect(status).toMatchObject({
      running: true,
      pid: host.pid,
      lifecycle: 'enrolled.operating',
      node: NODE,
      linked_since: expect.any(String),
      last_pass: { outcome: 'converged', reasons: expect.any(Array) },
      last_declaration: { generation: 1, kind: 'overlay', epoch: 5, resources: 1, taken_at: expect.any(String) },
    });
    const text = await runVerb([StatusCommand], ['status', '--root', root]);
    expect(text.stdout).toMatch(/^lifecycle\s+enrolled\.operating \(node runner, process \d+\)$/m);
    expect(text.stdout).toMatch(/^last declaration\s+generation 1 \(overlay, epoch 5, 1 resources\), taken \d+ s ago$/m);

    const tree = await runVerb([TreeCommand], ['tree', '--root', root, '--json']);
    expect(tree.code).toBe(0);
    const root_ = JSON.parse(tree.stdout) as { id: string; children: Array<{ id: string; child_state?: string; children: Array<{ id: string; children: Array<{ id: string; state: string }> }> }> };
    expect(root_.id).toBe('host');
    expect(root_.children.map((child) => [child.id, child.child_state])).toEqual([['lifecycle', 'enrolled.operating']]);
    const node = root_.children[0]!.children;
    expect(node.map((child) => child.id)).toEqual(['node']);
    expect(node[0]!.children.map((child) => [child.id, child.state])).toEqual([['link', 'running'], ['intake', 'running'], ['heartbeats', 'running'], ['reconcile', 'running']]);
    expect((await runVerb([TreeCommand], ['tree', '--root', root])).stdout).toMatch(/^host {2}supervising\n└─ lifecycle {2}running {2}enrolled\.operating\n {3}└─ node {2}supervising\n/);
  });

  const refusedCases: Array<[string, RegExp, () => Promise<unknown>, Report['refused']]> = [
    ['a declaration altered after signing', /bad_signature/, async () => {
      const envelope = sealed(declaration(7, 5, 'tampered\n'));
      const payload = Buffer.from(Buffer.from(envelope.payload, 'base64').toString().replace('tampered', 'tampers!')).toString('base64');
      await controller.publish(NODE, { ...envelope, payload });
    }, { reason: 'bad_signature' }],
    ['a declaration signed by another controller', /foreign_key/, () => controller.declare(declaration(8, 5, 'foreign\n'), generateSigningKeyPair().secret_key), { reason: 'foreign_key' }],
    ['a declaration from an older controller epoch', /stale_epoch/, () => controller.declare(declaration(9, 4, 'stale\n')), { reason: 'stale_epoch', generation: 9, epoch: 4 }],
  ];
  test.each(refusedCases)('refuses and reports %s, and never applies it', async (_name, logged, send, refused) => {
    const from = output.length;
    const before = reports.received.length;
    await send();
    const report = await reports.next((r) => reports.received.indexOf(r) >= before && r.refused !== undefined);
    expect(report.refused).toMatchObject(refused!);
    expect(report.results).toEqual([]);
    expect(report.generation).toBe(1);
    await said(new RegExp(`^refused a declaration \\(${logged.source}\\)`, 'm'), from);
    expect(await fileOnMachine('etc/motd')).toBe('first\n');
    expect((await storeNow()).last_declaration?.applied_generation).toBe(1);
  });

  test('refuses and reports a replayed older declaration, keeping the newer one', async () => {
    const first = sealed(overlayDeclaration(1, 5, 'first\n'));
    await controller.declare(declaration(2, 5, 'second\n'));
    await reports.next((r) => r.generation === 2 && r.results.length > 0);
    expect(await fileOnMachine('etc/motd')).toBe('second\n');

    const before = reports.received.length;
    await controller.publish(NODE, first);
    const report = await reports.next((r) => reports.received.indexOf(r) >= before && r.refused !== undefined);
    expect(report.refused).toMatchObject({ reason: 'older_generation', generation: 1 });
    expect(await fileOnMachine('etc/motd')).toBe('second\n');
    expect((await storeNow()).last_declaration?.applied_generation).toBe(2);
  });

  test('has no listening socket, only its outbound connection to the broker', async () => {
    const sockets = await socketsOf(host.pid!);
    expect(sockets.some((s) => s.remotePort === broker.port && s.state === 'ESTABLISHED')).toBe(true);
    expect(await listeningSockets(host.pid!)).toEqual([]);
  });

  test('a rouse (SIGUSR1) does not open Node\'s inspector: still no listening socket', async () => {
    // Regression: with no handler, Node answers SIGUSR1 by listening on 127.0.0.1:9229.
    const from = output.length;
    host.kill('SIGUSR1');
    await said(/^rouse: /m, from);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await listeningSockets(host.pid!)).toEqual([]);
    expect(host.exitCode).toBeNull();
  });

  test('a final declaration that cannot remove everything reports what was left and keeps the node enrolled', async () => {
    const from = output.length;
    const issue = { shape: 'file' as const, path: '/etc/issue', content: { text: 'mesh\n' }, mode: '0644', owner: 'root', group: 'root' };
    const both = declaration(3, 5, 'second\n');
    await controller.declare({ ...both, resources: [...both.resources, issue] });
    await reports.next((r) => r.generation === 3 && r.results.length === 2);
    // Something else took the path: the host does not remove what it did not make.
    await fs.rm(path.join(root, 'etc/issue'));
    await fs.mkdir(path.join(root, 'etc/issue'));

    await controller.declare({ node: NODE, epoch: 5, generation: 4, kind: 'final', issued_at: '2026-08-27T14:02:00Z', resources: [] });
    const report = await reports.next((r) => r.generation === 4);

    expect(report.results).toEqual(expect.arrayContaining([
      expect.objectContaining({ key: 'file:/etc/motd', outcome: 'removed' }),
      expect.objectContaining({ key: 'file:/etc/issue', outcome: 'failed' }),
    ]));
    expect(report.owned.resources.map((r) => r.key)).toEqual(['file:/etc/issue']);
    await said(/^the final declaration left resources behind \(file:\/etc\/issue\); node runner stays enrolled/m, from);
    expect((await storeNow()).identity?.node).toBe(NODE);
  });

  test('a final declaration sent again, once nothing is in the way, removes the rest, reports, and leaves the machine hosted', async () => {
    const from = output.length;
    await fs.rmdir(path.join(root, 'etc/issue'));
    await controller.declare({ node: NODE, epoch: 5, generation: 5, kind: 'final', issued_at: '2026-08-27T14:02:00Z', resources: [] });
    const report = await reports.next((r) => r.generation === 5);

    expect(report.results).toEqual([expect.objectContaining({ key: 'file:/etc/issue', outcome: 'removed' })]);
    expect(report.owned.resources).toEqual([]);
    expect(await fileOnMachine('etc/motd')).toBeUndefined();
    await said(/^released: /m, from);
    await said(/^hosted: this machine has no identity yet/m, from);
    const state = await storeNow();
    expect(state.identity).toBeNull();
    expect(state.pins).toBeNull();
    expect(state.last_declaration).toBeNull();
    expect(host.exitCode).toBeNull();
    await expect(fs.stat(path.join(stateDir, 'host.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('SIGTERM stops it with status 0, and it removes its pidfile', async () => {
    host.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fs.stat(path.join(stateDir, 'host.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(output).toMatch(/^stopped$/m);
  });

  test('status, once it has stopped, says it is not running, and why it stopped, and exits 1', async () => {
    await fs.stat(path.join(stateDir, 'host-status.json'));
    const shown = await runVerb([StatusCommand], ['status', '--root', root]);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toBe('');
    expect(shown.stderr).toMatch(/^error: nox-mesh-host run is not running over this state directory \(it stopped at \S+: asked to stop \(SIGTERM or SIGINT\)\): ".*var\/lib\/mesh-host"\nnext: {2}start it/);
    expect((await runVerb([TreeCommand], ['tree', '--root', root, '--json'])).code).toBe(1);
  });
});

function sealed(d: Declaration): Envelope {
  return sealEnvelope(d, controller.key.secret_key);
}
