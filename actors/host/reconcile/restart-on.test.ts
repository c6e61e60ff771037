import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as z from 'zod';
import { emptyHostState } from '../../../schema/host-state';
import { Resource, resourceKey } from '../../../schema/resource';
import { ProcessRunner } from '../../shared/process/command-runner';
import { directoryApplier } from '../appliers/directory.applier';
import { fileApplier } from '../appliers/file.applier';
import { serviceApplier } from '../appliers/service/service.applier';
import { startStopDaemonBackend } from '../appliers/service/start-stop-daemon.backend';
import type { ServiceBackend } from '../appliers/service/service-backend';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { converge, type Adopter, type ConvergeDeps } from './converge';

// A service restarts when a file it names in restart_on is written by the same pass, and only
// then: real files in a temporary root, the real file and service appliers, and real processes
// started and stopped by Debian's start-stop-daemon, told apart by their pids.

// The services are started before the host first looks (as a machine in use has them), so
// adoption takes them as they are: this stand-in takes what matches and keeps the rest.
const takeMatching: Adopter = {
  async adopt(resource, _applier, observation) {
    const subject = resourceKey(resource);
    return observation.differences.length === 0
      ? { take: true, line: { status: 'ok', subject, detail: 'matches' } }
      : { take: false, line: { status: 'kept', subject, detail: observation.differences.join('; ') } };
  },
};

let root: string;
let deps: ConvergeDeps;

const file = (p: string, text: string): Resource => Resource.parse({ shape: 'file', path: p, content: { text }, mode: '0600', owner: '0', group: '0' } satisfies z.input<typeof Resource>);
const service = (name: string, restartOn: string[]): Resource => Resource.parse({ shape: 'service', name, state: 'running', enabled: true, ...(restartOn.length === 0 ? {} : { restart_on: restartOn }) });

const declaration = (app: string, other: string): Resource[] => [
  file('/etc/app/credential', app),
  file('/etc/other/credential', other),
  service('app', ['/etc/app/credential']),
  service('other', ['/etc/other/credential']),
];

const pidOf = (name: string): number => Number(readFileSync(path.join(root, 'run/mesh-host/services', `${name}.pid`), 'utf8').trim());
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
};
const seen: number[] = [];
const running = (name: string): number => {
  const pid = pidOf(name);
  seen.push(pid);
  expect(alive(pid)).toBe(true);
  return pid;
};

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'restart-on-'));
  const stateDir = path.join(root, 'var/lib/mesh-host');
  const definitions = path.join(root, 'etc/mesh-host/services');
  await fs.mkdir(definitions, { recursive: true });
  for (const name of ['app', 'other']) await fs.writeFile(path.join(definitions, `${name}.json`), JSON.stringify({ exec: ['/bin/sleep', '300'] }));
  deps = {
    state: new StateHandle(new HostStore(stateDir), emptyHostState()),
    appliers: { file: fileApplier, directory: directoryApplier, service: serviceApplier(startStopDaemonBackend()) },
    ctx: { root, stateDir, runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' },
    adopter: takeMatching,
    now: () => new Date('2026-12-01T00:00:00Z'),
    nodeName: () => 'test-node',
  };
  for (const name of ['app', 'other']) await deps.appliers.service?.apply(service(name, []) as never, deps.ctx);
});
afterEach(async () => {
  for (const pid of seen.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await fs.rm(root, { recursive: true, force: true });
});

describe('a service with restart_on', () => {
  test('restarts when its file changes, and a service whose file did not change keeps its process', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    const before = { app: running('app'), other: running('other') };

    const results = await converge(declaration('two', 'one'), { removeUndeclared: true }, deps);

    expect(await fs.readFile(path.join(root, 'etc/app/credential'), 'utf8')).toBe('two');
    expect(results.find((r) => r.key === 'service:app')).toMatchObject({ outcome: 'applied', detail: 'restart: /etc/app/credential changed in this pass' });
    expect(results.find((r) => r.key === 'service:other')).toMatchObject({ outcome: 'unchanged' });
    expect(running('app')).not.toBe(before.app);
    expect(alive(before.app)).toBe(false);
    expect(running('other')).toBe(before.other);
  });

  test('is not restarted by a pass that writes nothing it names', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    const before = { app: running('app'), other: running('other') };

    const results = await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);

    expect(results.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect([running('app'), running('other')]).toEqual([before.app, before.other]);
  });

  test('declared before its file, is still restarted after the file is written', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    const before = running('app');
    const reversed = [...declaration('two', 'one')].reverse();

    await converge(reversed, { removeUndeclared: true }, deps);

    expect(running('app')).not.toBe(before);
  });

  // Regression: a host killed after writing a rotated credential and before restarting the
  // service that reads it found the file already as declared on its next pass, and the service
  // kept the old credential for good. The store a kill at that instant leaves is taken by
  // copying the state directory when the restart begins; a fresh pass over it must restart.
  test('killed between its file and its restart, is restarted by the next pass from the store left behind', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    const before = { app: running('app'), other: running('other') };
    const snapshot = await fs.mkdtemp(path.join(os.tmpdir(), 'restart-on-killed-'));
    const real = startStopDaemonBackend();
    const killedAtRestart: ServiceBackend = {
      ...real,
      status: (name, ctx) => real.status(name, ctx),
      start: (name, ctx) => real.start(name, ctx),
      enable: (name, ctx) => real.enable(name, ctx),
      disable: (name, ctx) => real.disable(name, ctx),
      async stop(name) {
        await fs.cp(deps.ctx.stateDir, snapshot, { recursive: true });
        throw new Error(`killed before restarting ${name}`);
      },
    };

    await converge(declaration('two', 'one'), { removeUndeclared: true }, { ...deps, appliers: { ...deps.appliers, service: serviceApplier(killedAtRestart) } });
    expect(running('app')).toBe(before.app);

    const store = new HostStore(snapshot);
    const left = (await store.load()).state;
    expect(left.restarts_owed).toEqual(['app']);
    const restarted: ConvergeDeps = { ...deps, state: new StateHandle(store, left), ctx: { ...deps.ctx, stateDir: snapshot } };
    try {
      const results = await converge(declaration('two', 'one'), { removeUndeclared: true }, restarted);

      expect(results.find((r) => r.key === 'file:/etc/app/credential')).toMatchObject({ outcome: 'unchanged' });
      expect(results.find((r) => r.key === 'service:app')).toMatchObject({ outcome: 'applied', detail: expect.stringContaining('restart: owed') });
      const after = running('app');
      expect(after).not.toBe(before.app);
      expect(alive(before.app)).toBe(false);
      expect(running('other')).toBe(before.other);
      expect(restarted.state.current().restarts_owed).toBeUndefined();
      expect((await new HostStore(snapshot).load()).state.restarts_owed).toBeUndefined();

      // Carried out once: the pass after keeps the new process.
      await converge(declaration('two', 'one'), { removeUndeclared: true }, restarted);
      expect(running('app')).toBe(after);
    } finally {
      await fs.rm(snapshot, { recursive: true, force: true });
    }
  });

  test('restarted earlier in a pass than its file is written, is restarted again after the file', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    running('app');
    // Stopped by hand: the pass starts it at its turn, before its file (declared after it).
    const stopped = pidOf('app');
    process.kill(stopped, 'SIGKILL');
    const reversed = [...declaration('two', 'one')].reverse();

    const results = await converge(reversed, { removeUndeclared: true }, deps);

    expect(results.find((r) => r.key === 'service:app')).toMatchObject({ outcome: 'applied', detail: expect.stringContaining('restart: /etc/app/credential changed') });
    expect(deps.state.current().restarts_owed).toBeUndefined();
  });

  test('a restart owed to a service no longer declared is dropped by a full pass, and kept by one that only adds', async () => {
    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    await deps.state.update((state) => ({ ...state, restarts_owed: ['gone'] }));

    await converge(declaration('one', 'one'), { removeUndeclared: false }, deps);
    expect(deps.state.current().restarts_owed).toEqual(['gone']);

    await converge(declaration('one', 'one'), { removeUndeclared: true }, deps);
    expect(deps.state.current().restarts_owed).toBeUndefined();
  });
});
