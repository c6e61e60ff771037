import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServiceResource } from '../../../../schema/resource';
import { ProcessRunner } from '../../../shared/process/command-runner';
import type { ApplyContext } from '../applier';
import { serviceApplier } from './service.applier';
import { startStopDaemonBackend } from './start-stop-daemon.backend';

// The real start-stop-daemon starting and stopping real processes; only the files are in a
// temporary root.

/**
 * True while the process runs. A stopped process whose parent is an init that reaps late stays
 * a zombie for a moment: it has ended, and counts as gone.
 */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function eventually<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i += 1) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('service applier over the real start-stop-daemon', () => {
  const applier = serviceApplier(startStopDaemonBackend());
  let root: string;
  let ctx: ApplyContext;
  const started: number[] = [];
  const strangers: ChildProcess[] = [];

  const define = async (name: string, definition: object): Promise<void> => {
    const file = path.join(root, 'etc/mesh-host/services', `${name}.json`);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, JSON.stringify(definition));
  };
  const pidOf = async (name: string): Promise<number> => {
    const pid = Number((await fs.readFile(path.join(root, 'run/mesh-host/services', `${name}.pid`), 'utf8')).trim());
    started.push(pid);
    return pid;
  };
  const service = (name: string, state: 'running' | 'stopped', enabled: boolean): ServiceResource => ({ shape: 'service', name, state, enabled });

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ssd-root-'));
    ctx = { root, stateDir: path.join(root, 'var/lib/mesh-host'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
    await define('sleeper', { exec: ['/bin/sleep', '300'] });
  });
  afterEach(async () => {
    for (const pid of started.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    for (const child of strangers.splice(0)) child.kill('SIGKILL');
    await fs.rm(root, { recursive: true, force: true });
  });

  test('starts a real process in the background and observes it running', async () => {
    const sleeper = service('sleeper', 'running', true);
    expect(await applier.observe(sleeper, ctx)).toEqual({
      present: true,
      differences: ['not running, declared running', 'disabled, declared enabled'],
    });

    await applier.apply(sleeper, ctx);

    const pid = await pidOf('sleeper');
    expect(isAlive(pid)).toBe(true);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(['/bin/sleep', '300', '']);
    expect(await applier.observe(sleeper, ctx)).toEqual({ present: true, differences: [] });
    await expect(fs.access(path.join(root, 'etc/mesh-host/services/enabled/sleeper'))).resolves.toBeUndefined();
  });

  test('stops the real process, and observe then says it is stopped', async () => {
    await applier.apply(service('sleeper', 'running', false), ctx);
    const pid = await pidOf('sleeper');

    const stopped = service('sleeper', 'stopped', false);
    expect((await applier.observe(stopped, ctx)).differences).toEqual(['running, declared stopped']);
    await applier.apply(stopped, ctx);

    expect(isAlive(pid)).toBe(false);
    expect(await applier.observe(stopped, ctx)).toEqual({ present: true, differences: [] });
    await expect(fs.access(path.join(root, 'run/mesh-host/services/sleeper.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a process killed by hand is drift that apply starts again', async () => {
    const sleeper = service('sleeper', 'running', false);
    await applier.apply(sleeper, ctx);
    const first = await pidOf('sleeper');
    process.kill(first, 'SIGKILL');
    await eventually(async () => (isAlive(first) ? undefined : true), 'the killed process to end');

    expect((await applier.observe(sleeper, ctx)).differences).toEqual(['not running, declared running']);
    await applier.apply(sleeper, ctx);
    const second = await pidOf('sleeper');
    expect(second).not.toBe(first);
    expect(isAlive(second)).toBe(true);
  });

  test('removal stops the process and clears the enabled mark but keeps the definition', async () => {
    await applier.apply(service('sleeper', 'running', true), ctx);
    const pid = await pidOf('sleeper');

    expect(await applier.remove('service:sleeper', ctx)).toBe('stopped');

    expect(isAlive(pid)).toBe(false);
    await expect(fs.access(path.join(root, 'etc/mesh-host/services/enabled/sleeper'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(JSON.parse(await fs.readFile(path.join(root, 'etc/mesh-host/services/sleeper.json'), 'utf8'))).toEqual({ exec: ['/bin/sleep', '300'] });
  });

  test('enabling does not write through a link put at the marker\'s name, nor through a link into the state directory', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'ssd-outside-'));
    try {
      // A link to where nothing is yet (as to a cron.d entry): writing through it would create it.
      const planted = path.join(outside, 'cron-job');
      const markers = path.join(root, 'etc/mesh-host/services/enabled');
      await fs.mkdir(markers, { recursive: true });
      await fs.symlink(planted, path.join(markers, 'sleeper'));
      await expect(applier.apply(service('sleeper', 'stopped', true), ctx)).rejects.toThrow(/a symbolic link is at .*enabled\/sleeper/);
      expect(await fs.readdir(outside)).toEqual([]);

      await fs.rm(markers, { recursive: true });
      await fs.mkdir(ctx.stateDir, { recursive: true });
      await fs.symlink(ctx.stateDir, markers);
      await expect(applier.apply(service('sleeper', 'stopped', true), ctx)).rejects.toThrow(/leads into the host's state directory/);
      expect(await fs.readdir(ctx.stateDir)).toEqual([]);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  test('a stale pidfile naming some other process is not the service, and that process is never stopped', async () => {
    const stranger = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] });
    strangers.push(stranger);
    const pidfile = path.join(root, 'run/mesh-host/services/sleeper.pid');
    await fs.mkdir(path.dirname(pidfile), { recursive: true });
    await fs.writeFile(pidfile, `${stranger.pid}\n`);

    expect((await applier.observe(service('sleeper', 'running', false), ctx)).differences).toEqual(['not running, declared running']);
    expect(await applier.remove('service:sleeper', ctx)).toBe('stopped');
    expect(isAlive(stranger.pid as number)).toBe(true);
  });

  test("the service gets its definition's environment and directory, not the host's environment", async () => {
    const out = path.join(root, 'said');
    await define('talker', {
      exec: ['/bin/sh', '-c', `echo "$GREETING $(pwd) \${HOST_ONLY:-unset}" > ${out}; while :; do sleep 1; done`],
      directory: '/tmp',
      env: { GREETING: 'hello' },
    });
    process.env.HOST_ONLY = 'leaked';
    try {
      await applier.apply(service('talker', 'running', false), ctx);
    } finally {
      delete process.env.HOST_ONLY;
    }
    await pidOf('talker');
    const said = await eventually(async () => (await fs.readFile(out, 'utf8')) || undefined, 'the service to write');
    expect(said).toBe('hello /tmp unset\n');
    expect((await applier.observe(service('talker', 'running', false), ctx)).differences).toEqual([]);
    await applier.remove('service:talker', ctx);
  });

  test('a program that exits at once fails the start, saying what to run by hand', async () => {
    await define('quitter', { exec: ['/bin/false'] });
    const quick = serviceApplier(startStopDaemonBackend({ startWaitMs: 300 }));
    await expect(quick.apply(service('quitter', 'running', false), ctx)).rejects.toThrow(
      'quitter is not running 0.3 s after start-stop-daemon started it: run ["/bin/false"] by hand to see why it exits',
    );
  });

  test('a service without a definition does not exist', async () => {
    expect(await applier.observe(service('nosuch', 'running', true), ctx)).toEqual({ present: false, differences: ['no such service'] });
    await expect(applier.apply(service('nosuch', 'running', true), ctx)).rejects.toThrow(/no such service "nosuch" in start-stop-daemon/);
  });

  test('a definition that cannot be used makes the service unreadable, naming the file and the field', async () => {
    await define('broken', { exec: ['sleep', '300'] });
    const observation = await applier.observe(service('broken', 'running', true), ctx);
    expect(observation.unreadable).toBe(
      'a service definition cannot be used: definition.exec: exec[0] must be an absolute path to the executable: ' +
        JSON.stringify(path.join(root, 'etc/mesh-host/services/broken.json')),
    );
  });
});
