import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EnrolReply } from '../../../schema/enrolment';
import type { HostState } from '../../../schema/host-state';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { FakeController } from '../link/testing/fake-controller';
import { runVerb } from '../profile/testing/cli-harness';
import { hostWaits } from '../run/testing/host-waits';
import { EnrolCommand } from './enrol.command';
import { StatusCommand } from './status.command';

// `nox-mesh-host enrol` runs the lifecycle machine, so `status` says `enrolling` while the
// enrolment waits on the broker: here the controller's answer is held until the test lets it
// go. A real nats-server with TLS; the controller's side is played by a fake; `run` is the real
// process over its own root, and `enrol` runs in this process (so its pid is this one's).

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');

let broker: TestBroker;
let controller: FakeController;
const roots: string[] = [];
const hosts: ChildProcess[] = [];

beforeAll(async () => {
  broker = await startTestBroker({ dirPrefix: 'enrol-status test-broker' });
  controller = await FakeController.start(broker);
});
afterAll(async () => {
  for (const host of hosts) if (host.exitCode === null) host.kill('SIGKILL');
  await controller?.stop();
  await broker?.stop();
  for (const root of roots) await fs.rm(root, { recursive: true, force: true });
});

async function machine(): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'enrol-status-machine-'));
  roots.push(root);
  return root;
}

const stateDirOf = (root: string): string => path.join(root, 'var/lib/mesh-host');

// The status as `nox-mesh-host status --json` prints it, with its exit status.
async function statusOf(root: string): Promise<{ code: number; json: Record<string, unknown> | undefined; stdout: string; stderr: string }> {
  const shown = await runVerb([StatusCommand], ['status', '--root', root, '--json']);
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(shown.stdout) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { code: shown.code, json, stdout: shown.stdout, stderr: shown.stderr };
}

/**
 * A token whose enrolment request the controller holds: `asked` settles once the request has
 * reached it, and `answer` sends the reply.
 */
async function heldEnrolment() {
  const token = await controller.issueToken();
  let answer: (reply: EnrolReply) => void = () => undefined;
  let heard: () => void = () => undefined;
  const asked = new Promise<void>((resolve) => {
    heard = resolve;
  });
  controller.answerEnrolment(token.token_id, () => new Promise<EnrolReply>((resolve) => {
    answer = resolve;
    heard();
  }));
  return { token, asked, answer: (reply: EnrolReply) => answer(reply) };
}

describe('nox-mesh-host status while nox-mesh-host enrol runs', () => {
  test('beside the running host: enrolling (the enrol process) while the broker holds the request, then enrolled (the host)', async () => {
    const root = await machine();
    let output = '';
    const host = spawn(process.execPath, [bin, 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    hosts.push(host);
    host.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    host.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const { said, until } = hostWaits(() => output);
    await said(/^hosted: this machine has no identity yet/m);
    expect((await statusOf(root)).json).toMatchObject({ running: true, pid: host.pid, lifecycle: 'hosted' });

    const held = await heldEnrolment();
    const enrolling = runVerb([EnrolCommand], ['enrol', '--token', held.token.text, '--root', root]);
    await held.asked;
    const during = await statusOf(root);
    expect(during.code).toBe(0);
    expect(during.json).toMatchObject({ running: true, pid: process.pid, lifecycle: 'enrolling', node: null, tree: null });
    const text = await runVerb([StatusCommand], ['status', '--root', root]);
    expect(text.stdout).toMatch(new RegExp(`^lifecycle\\s+enrolling \\(process ${process.pid}\\)$`, 'm'));
    // The running host has not taken anything up: the store holds no identity yet.
    expect(output).not.toMatch(/^enrolled as node/m);

    held.answer({ ok: true, node: 'held-node' });
    const enrolled = await enrolling;
    expect(enrolled.stderr).toBe('');
    expect(enrolled.code).toBe(0);
    expect(enrolled.stdout).toMatch(/^enrolled as held-node;/m);
    const state = JSON.parse(await fs.readFile(path.join(stateDirOf(root), 'state.json'), 'utf8')) as HostState;
    await controller.admitNode('held-node', state.identity!.nkey_public);

    const after = await until('the running host to say it is the node', async () => {
      const shown = await statusOf(root);
      return shown.code === 0 && shown.json?.lifecycle === 'enrolled.operating' ? shown.json : undefined;
    });
    expect(after).toMatchObject({ running: true, pid: host.pid, node: 'held-node' });
    host.kill('SIGTERM');
  });

  test('with no host running: enrolling while held; a refusal leaves no status behind, an enrolment says enrolled and what to start', async () => {
    const root = await machine();
    expect((await statusOf(root)).code).toBe(1);

    const refused = await heldEnrolment();
    const refusing = runVerb([EnrolCommand], ['enrol', '--token', refused.token.text, '--root', root]);
    await refused.asked;
    expect((await statusOf(root)).json).toMatchObject({ running: true, pid: process.pid, lifecycle: 'enrolling' });
    refused.answer({ ok: false, refusal: 'proof_invalid', message: 'the proof does not hold', next: 'enrol again' });
    const outcome = await refusing;
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toMatch(/^error: /m);
    // Back in hosted, as the machine was: the file it found (none) is what it leaves.
    await expect(fs.stat(path.join(stateDirOf(root), 'host-status.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    const notRunning = await statusOf(root);
    expect(notRunning.code).toBe(1);
    expect(notRunning.stderr).toMatch(/nox-mesh-host run is not running over this state directory: /);

    const held = await heldEnrolment();
    const enrolling = runVerb([EnrolCommand], ['enrol', '--token', held.token.text, '--root', root]);
    await held.asked;
    expect((await statusOf(root)).json).toMatchObject({ running: true, pid: process.pid, lifecycle: 'enrolling' });
    held.answer({ ok: true, node: 'alone' });
    expect((await enrolling).code).toBe(0);
    // Nothing runs the node yet: the status says so, and what the enrolment left.
    const after = await statusOf(root);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/not running over this state directory \(it stopped at [^:]+:\d\d:[\d.]+Z: nox-mesh-host enrol enrolled this machine as node alone; start nox-mesh-host run/);
    expect(JSON.parse(await fs.readFile(path.join(stateDirOf(root), 'host-status.json'), 'utf8'))).toMatchObject({ pid: process.pid, lifecycle: 'enrolled', node: 'alone', stopped: { failed: false } });
  });

  test('an enrol process stopped while it waits on the broker puts the status file back before it ends', async () => {
    const root = await machine();
    const held = await heldEnrolment();
    const child = spawn(process.execPath, [bin, 'enrol', '--token', held.token.text, '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    hosts.push(child);
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await held.asked;
    const { until } = hostWaits(() => output);
    await until('the enrol process to say it is enrolling', async () => {
      const shown = await statusOf(root);
      return shown.json?.lifecycle === 'enrolling' && shown.json.pid === child.pid ? true : undefined;
    });
    child.kill('SIGTERM');
    // Ended by the signal, as before: nothing is said in its place.
    expect(await ended).toBe('SIGTERM');
    await expect(fs.stat(path.join(stateDirOf(root), 'host-status.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    held.answer({ ok: false, refusal: 'proof_invalid', message: 'too late', next: 'enrol again' });
  });
});
