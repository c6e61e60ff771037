import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { envelopeDigest, generateNodeIdentity, generateSigningKeyPair, sealEnvelope } from '../../shared/crypto';
import { freePort } from '../../../e2e/mesh-rig';
import { HostStore } from '../store/host-store';
import { readHostStatus } from './host-status';
import { PID_FILE } from './pidfile';

// `nox-mesh-host run` in a real process over a temporary root, when its supervision tree cannot
// keep it going: the reconcile actor fails each time it starts, the node's supervisor gives up on
// it and fails the lifecycle, and the root supervisor, once the lifecycle has failed more often
// than its limits allow, gives up. The process must end non-zero (the service manager and the
// launcher start it again only then), say why in its log, and leave a status that says so.

const repo = path.resolve(__dirname, '..', '..', '..');
const program = path.join(repo, 'bin', 'nox-mesh-host');
let root: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'root-gives-up-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const stateDir = (): string => path.join(root, 'var/lib/mesh-host');

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

// Runs the host to its end, however long its backoffs take, or kills it at the deadline.
function runHostProcess(onStarted?: (pid: number, said: () => string) => void): Promise<Ended> {
  const child = spawn(process.execPath, [program, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  onStarted?.(child.pid as number, () => stdout);
  const deadline = setTimeout(() => child.kill('SIGKILL'), 150_000);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(deadline);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// An enrolled node holding a declaration its controller signed, whose pinned controller key a
// person then changed by hand in state.json: the declaration the host holds no longer verifies.
async function enrolledWithPinEditedByHand(): Promise<void> {
  const controller = generateSigningKeyPair();
  const payload = { node: 'gives-up', epoch: 1, generation: 1, kind: 'full', issued_at: '2026-12-01T08:00:00Z', resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'declared\n' } }] };
  const envelope = sealEnvelope(payload, controller.secret_key);
  await new HostStore(stateDir()).save({
    ...emptyHostState(),
    identity: { node: 'gives-up', ...generateNodeIdentity() },
    // A closed port: the link backs off quietly, and is not what fails.
    pins: { broker_url: `tls://127.0.0.1:${await freePort()}`, broker_fingerprint: '0'.repeat(64), controller_public_key: controller.public_key },
    last_declaration: { envelope, applied_generation: 1, digest: envelopeDigest(envelope) },
    highest_epoch: 1,
    sequence: 1,
  });
  const file = path.join(stateDir(), 'state.json');
  const state = JSON.parse(await fs.readFile(file, 'utf8')) as { pins: { controller_public_key: string } };
  state.pins.controller_public_key = generateSigningKeyPair().public_key;
  await fs.writeFile(file, JSON.stringify(state));
}

function hostSays(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [program, ...args, '--root', root], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

test('a host whose root supervisor gives up exits 1, says why in its log, and leaves a status that says it stopped', async () => {
  await enrolledWithPinEditedByHand();

  const ended = await runHostProcess();

  const output = `stdout:\n${ended.stdout}\nstderr:\n${ended.stderr}`;
  expect({ code: ended.code, signal: ended.signal, output }).toEqual({ code: 1, signal: null, output });
  // The log's last line names the supervisor that gave up, the child it gave up on, and the
  // failure underneath: the reconcile actor, refusing the declaration the store holds.
  const lines = ended.stdout.trimEnd().split('\n');
  expect(lines.at(-1)).toMatch(/^stopping: supervisor "host" gave up on child "lifecycle" after more than 3 restarts in 60000 ms; last error: ".*gave up on reconcile after more than 3 restarts.*signed by an untrusted key/);
  expect(lines).not.toContain('stopped');
  expect(ended.stderr).toMatch(/^error: supervisor "host" gave up on child "lifecycle"/m);
  expect(ended.stderr).not.toMatch(/^\s+at /m);

  const status = await readHostStatus(stateDir());
  expect(status).toMatchObject({ lifecycle: 'stopped', node: 'gives-up', stopped: { failed: true, why: expect.stringMatching(/^supervisor "host" gave up on child "lifecycle"/) } });
  await expect(fs.stat(path.join(stateDir(), PID_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  // What a person asking afterwards is told.
  const asked = hostSays('status');
  expect(asked.status).toBe(1);
  expect(asked.stderr).toMatch(/^error: nox-mesh-host run is not running over this state directory \(it stopped at \S+: supervisor "host" gave up on child "lifecycle"/);
}, 180_000);

test('a host asked to stop exits 0 and leaves a status that says it stopped, not that it failed', async () => {
  let stopAsked: Promise<void> = Promise.resolve();
  const ended = await runHostProcess((pid, said) => {
    stopAsked = (async () => {
      const deadline = Date.now() + 60_000;
      while (!/^hosted: /m.test(said()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      process.kill(pid, 'SIGTERM');
    })();
  });
  await stopAsked;

  expect({ code: ended.code, stdout: ended.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^stopped$/m) });
  expect(await readHostStatus(stateDir())).toMatchObject({ lifecycle: 'stopped', stopped: { failed: false, why: 'asked to stop (SIGTERM or SIGINT)' } });
  expect(hostSays('status').stderr).toMatch(/\(it stopped at \S+: asked to stop \(SIGTERM or SIGINT\)\)/);
}, 120_000);
