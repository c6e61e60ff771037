import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHostStatus, writeHostStatus, type HostStatus } from './host-status';
import { hostedStatus, showWhileHosted, stoppedWhileHosted } from './hosted-status';

// `run` started beside an enrolment under way (or stopped during one) must not write `hosted`
// over the enrol process's `enrolling`: the machine is enrolling, and status would say otherwise.

let stateDir: string;
let enrol: ChildProcess | undefined;

beforeEach(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hosted-status-'));
});
afterEach(async () => {
  enrol?.kill('SIGKILL');
  enrol = undefined;
  await fs.rm(stateDir, { recursive: true, force: true });
});

function enrolling(pid: number): HostStatus {
  return { ...hostedStatus(new Date('2026-12-07T10:00:00Z')), pid, lifecycle: 'enrolling' };
}

// A process that stands in for `nox-mesh-host enrol` while it enrols: alive, and not this one.
function liveOther(): number {
  enrol = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  return enrol.pid as number;
}

function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

test('leaves the status of a live enrolment alone, hosted or stopped', async () => {
  const pid = liveOther();
  await writeHostStatus(stateDir, enrolling(pid));
  expect(await showWhileHosted(stateDir, hostedStatus(new Date()))).toBe(false);
  expect(await showWhileHosted(stateDir, stoppedWhileHosted(new Date()))).toBe(false);
  expect(await readHostStatus(stateDir)).toMatchObject({ pid, lifecycle: 'enrolling' });
});

test('writes over an enrolment whose process has ended, and over an earlier run\'s status', async () => {
  await writeHostStatus(stateDir, enrolling(deadPid()));
  expect(await showWhileHosted(stateDir, hostedStatus(new Date()))).toBe(true);
  expect(await readHostStatus(stateDir)).toMatchObject({ pid: process.pid, lifecycle: 'hosted' });
  expect(await showWhileHosted(stateDir, stoppedWhileHosted(new Date()))).toBe(true);
  expect(await readHostStatus(stateDir)).toMatchObject({ pid: process.pid, lifecycle: 'stopped', stopped: { failed: false } });
});

test('writes where there is no status file yet', async () => {
  expect(await showWhileHosted(stateDir, hostedStatus(new Date()))).toBe(true);
  expect(await readHostStatus(stateDir)).toMatchObject({ lifecycle: 'hosted', node: null });
});
