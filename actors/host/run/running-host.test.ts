import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeHostStatus, type HostStatus } from './host-status';
import { PID_FILE } from './pidfile';
import { HostNotRunning, HostStatusUnknown, readRunningHost } from './running-host';

let stateDir: string;

beforeEach(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'running-host-'));
});
afterEach(async () => {
  await fs.rm(stateDir, { recursive: true, force: true });
});

function statusOf(pid: number): HostStatus {
  return { format: 1, pid, started_at: '2026-12-03T10:00:00.000Z', written_at: '2026-12-03T10:05:00.000Z', lifecycle: 'enrolled.operating', node: 'web-1', linked_since: null, last_linked_at: null, last_pass: null, last_declaration: null, tree: null };
}

// A pid that was a process a moment ago and is not one now.
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

test('a state directory where no host ever ran is not running, and says which directory', async () => {
  const refused = readRunningHost(stateDir);
  await expect(refused).rejects.toBeInstanceOf(HostNotRunning);
  await expect(refused).rejects.toThrow(`nox-mesh-host run is not running over this state directory: "${stateDir}"`);
});

test('a status file left by a host that died without removing its pidfile is not shown as running', async () => {
  const pid = deadPid();
  await fs.writeFile(path.join(stateDir, PID_FILE), `${pid}\n`);
  await writeHostStatus(stateDir, statusOf(pid));
  await expect(readRunningHost(stateDir)).rejects.toThrow(/not running over this state directory \(its status was last written at 2026-12-03T10:05:00\.000Z\)/);
});

test('a status file written by another process than the one in the pidfile is not the running host\'s', async () => {
  await fs.writeFile(path.join(stateDir, PID_FILE), `${process.pid}\n`);
  await writeHostStatus(stateDir, statusOf(deadPid()));
  await expect(readRunningHost(stateDir)).rejects.toBeInstanceOf(HostStatusUnknown);
});

test('a status file that is not one (truncated, another format) is not shown either', async () => {
  await fs.writeFile(path.join(stateDir, PID_FILE), `${process.pid}\n`);
  await fs.writeFile(path.join(stateDir, 'host-status.json'), '{"format": 1, "pid": ');
  await expect(readRunningHost(stateDir)).rejects.toBeInstanceOf(HostStatusUnknown);
});

test('the running host\'s own status is read back as it wrote it', async () => {
  await fs.writeFile(path.join(stateDir, PID_FILE), `${process.pid}\n`);
  await writeHostStatus(stateDir, statusOf(process.pid));
  await expect(readRunningHost(stateDir)).resolves.toEqual(statusOf(process.pid));
});

test('an enrolment under way in its own process is shown, whether or not a host runs beside it', async () => {
  const enrolling = { ...statusOf(process.pid), lifecycle: 'enrolling', node: null };
  await writeHostStatus(stateDir, enrolling);
  await expect(readRunningHost(stateDir)).resolves.toEqual(enrolling);
  // `run` is running too (its pid in the pidfile): the enrolment is still what the machine does.
  await fs.writeFile(path.join(stateDir, PID_FILE), `${process.ppid}\n`);
  await expect(readRunningHost(stateDir)).resolves.toEqual(enrolling);
});

test('an enrolling status left by an enrol process that has ended is not shown as under way', async () => {
  await writeHostStatus(stateDir, { ...statusOf(deadPid()), lifecycle: 'enrolling', node: null });
  await expect(readRunningHost(stateDir)).rejects.toBeInstanceOf(HostNotRunning);
  await fs.writeFile(path.join(stateDir, PID_FILE), `${process.pid}\n`);
  await expect(readRunningHost(stateDir)).rejects.toBeInstanceOf(HostStatusUnknown);
});
