import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { Resource, resourceKey, type FileResource } from '../../../schema/resource';
import type * as z from 'zod';
import { directoryApplier } from '../appliers/directory.applier';
import { actionApplier } from '../appliers/action.applier';
import { fileApplier } from '../appliers/file.applier';
import { killLeftover, waitUntilGone } from '../../shared/process/testing/process-gone';
import type { Applier } from '../appliers/applier';
import { ProcessRunner } from '../../shared/process/command-runner';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { converge, type Adopter, type ConvergeDeps } from './converge';

// converge against real files in a temporary root, with the real file and directory appliers.
// Adoption here is a small stand-in that takes what already matches and keeps the rest; the
// adoption actor has its own tests.

const stubAdopter: Adopter = {
  async adopt(resource, _applier, observation) {
    // The line's subject is the resource key, as the real adopter's is: lines are matched to
    // what the host holds by it.
    const subject = resourceKey(resource);
    return observation.differences.length === 0
      ? { take: true, line: { status: 'ok', subject, detail: 'matches' } }
      : { take: false, line: { status: 'kept', subject, detail: observation.differences.join('; ') } };
  },
};

let root: string;
let stateDir: string;
let deps: ConvergeDeps;

const file = (p: string, text: string): Resource => Resource.parse({ shape: 'file', path: p, content: { text } } satisfies z.input<typeof Resource>);
const dir = (p: string): Resource => Resource.parse({ shape: 'directory', path: p });

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'converge-root-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
  const store = new HostStore(stateDir);
  deps = {
    state: new StateHandle(store, emptyHostState()),
    appliers: { file: fileApplier, directory: directoryApplier },
    ctx: { root, stateDir, runner: new ProcessRunner(), hostUnit: 'nox-mesh-host' },
    adopter: stubAdopter,
    now: () => new Date('2026-12-01T00:00:00Z'),
    nodeName: () => 'test-node',
  };
});
afterEach(async () => { await fs.rm(root, { recursive: true, force: true }); });

const read = (p: string) => fs.readFile(path.join(root, p), 'utf8');
const exists = (p: string) => fs.stat(path.join(root, p)).then(() => true, () => false);
const ownedKeys = () => deps.state.current().owned.resources.map((r) => r.key).sort();

describe('converge, a directory dropped from the declaration while its files stay declared', () => {
  test('keeps it as made on the way, without a failure on every pass, and removes it once nothing declared is inside', async () => {
    await converge([dir('/srv/old'), file('/srv/old/a', 'a\n'), file('/srv/old/b', 'b\n')], { removeUndeclared: true }, deps);

    const filesOnly = [file('/srv/old/a', 'a\n')];
    const dropped = await converge(filesOnly, { removeUndeclared: true }, deps);
    expect(dropped.filter((r) => r.outcome === 'failed')).toEqual([]);
    expect(dropped.find((r) => r.key === 'directory:/srv/old')).toMatchObject({ outcome: 'forgotten', detail: expect.stringContaining('1 declared path(s) lie under it (/srv/old/a)') });
    expect(ownedKeys()).toEqual(['file:/srv/old/a']);
    expect(await exists('srv/old/a')).toBe(true);
    expect(await exists('srv/old/b')).toBe(false);
    const again = await converge(filesOnly, { removeUndeclared: true }, deps);
    expect(again.map((r) => [r.key, r.outcome])).toEqual([['file:/srv/old/a', 'unchanged']]);

    // Something the operator put there keeps it after the host's last file goes; nothing fails.
    await fs.writeFile(path.join(root, 'srv/old/notes'), 'mine\n');
    expect((await converge([], { removeUndeclared: true }, deps)).map((r) => [r.key, r.outcome])).toEqual([['file:/srv/old/a', 'removed']]);
    expect(await read('srv/old/notes')).toBe('mine\n');
    await fs.rm(path.join(root, 'srv/old/notes'));
    expect(await converge([], { removeUndeclared: true }, deps)).toEqual([]);
    expect(await exists('srv/old')).toBe(false);
  });
});

describe('converge', () => {
  test('applies what differs, records it as owned, and leaves what matches alone', async () => {
    const declared = [dir('/srv/app'), file('/srv/app/config', 'port=80\n')];
    const first = await converge(declared, { removeUndeclared: true }, deps);
    expect(first.map((r) => [r.key, r.outcome])).toEqual([['directory:/srv/app', 'applied'], ['file:/srv/app/config', 'applied']]);
    expect(await read('srv/app/config')).toBe('port=80\n');
    expect(ownedKeys()).toEqual(['directory:/srv/app', 'file:/srv/app/config']);
    const second = await converge(declared, { removeUndeclared: true }, deps);
    expect(second.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
  });

  test('looks again at what an earlier apply of the batch may have done: a directory a file made on its way is found as declared', async () => {
    const declared = [file('/srv/new/app.conf', 'port=80\n'), dir('/srv/new'), file('/srv/other.conf', 'x\n')];
    const results = await converge(declared, { removeUndeclared: true }, deps);
    expect(results.map((r) => [r.key, r.outcome])).toEqual([
      ['file:/srv/new/app.conf', 'applied'],
      ['directory:/srv/new', 'unchanged'],
      ['file:/srv/other.conf', 'applied'],
    ]);
    expect(ownedKeys()).toEqual(['directory:/srv/new', 'file:/srv/new/app.conf', 'file:/srv/other.conf']);
  });

  test('a new host tidies the temporaries a killed host left beside a file it owns, even when the file needs no apply', async () => {
    await converge([file('/etc/motd', 'one\n')], { removeUndeclared: true }, deps);
    // What a host killed between preparing and renaming leaves: the file as it was, declared
    // again, and the new content's temporary beside it.
    const leftover = 'etc/.motd.nox-0123456789ab.tmp';
    await fs.writeFile(path.join(root, leftover), 'two\n');
    const next = { ...deps, ctx: { ...deps.ctx, runner: new ProcessRunner() } };
    const results = await converge([file('/etc/motd', 'one\n')], { removeUndeclared: true }, next);
    expect(results.map((r) => r.outcome)).toEqual(['unchanged']);
    expect(await exists(leftover)).toBe(false);
    expect(await read('etc/motd')).toBe('one\n');
  });

  test('leaves alone a directory holding nothing the host owns, temporaries and all', async () => {
    await fs.mkdir(path.join(root, 'opt'), { recursive: true });
    const theirs = 'opt/.tool.nox-0123456789ab.tmp';
    await fs.writeFile(path.join(root, theirs), 'not ours\n');
    await fs.writeFile(path.join(root, 'opt/tool'), 'x\n');
    const results = await converge([file('/opt/tool', 'x\n')], { removeUndeclared: true }, deps);
    expect(results.map((r) => r.outcome)).toEqual(['unchanged']);
    expect(await exists(theirs)).toBe(true);
  });

  test('marks before it writes what the host does not own yet, and rewrites what it owns with one store write', async () => {
    await converge([file('/etc/motd', 'one\n')], { removeUndeclared: true }, deps);
    const writes: string[][] = [];
    const update = deps.state.update.bind(deps.state);
    deps.state.update = (change) => update((s) => {
      const next = change(s);
      writes.push(next.applying);
      return next;
    });
    await converge([file('/etc/motd', 'two\n')], { removeUndeclared: true }, deps);
    expect(writes).toEqual([[]]);
    writes.length = 0;
    await converge([file('/etc/motd', 'three\n'), file('/etc/issue', 'new\n')], { removeUndeclared: true }, deps);
    expect(writes).toEqual([['file:/etc/issue'], []]);
    expect(await read('etc/motd')).toBe('three\n');
    expect(ownedKeys()).toEqual(['file:/etc/issue', 'file:/etc/motd']);
  });

  test('prepares the files of a directory made earlier in the same batch ahead, rather than writing and syncing each alone', async () => {
    const files = Array.from({ length: 40 }, (_, i) => file(`/srv/fresh/f${i}`, `${i}\n`));
    // What is waiting beside the directory when each file's apply begins: the temporaries
    // prepared ahead, or nothing when each file is written and synced on its own turn.
    const waiting: number[] = [];
    const temporaries = async (): Promise<number> => (await fs.readdir(path.join(root, 'srv/fresh'))).filter((name) => name.endsWith('.tmp')).length;
    const watched: Applier<FileResource> = { ...fileApplier, apply: async (resource, ctx) => { waiting.push(await temporaries()); return fileApplier.apply(resource, ctx); } };
    deps.appliers = { ...deps.appliers, file: watched };
    const results = await converge([dir('/srv/fresh'), ...files], { removeUndeclared: true }, deps);
    expect(results.map((r) => r.outcome)).toEqual(Array(41).fill('applied'));
    expect(waiting[0]).toBe(40);
    expect(await temporaries()).toBe(0);
    expect(await read('srv/fresh/f39')).toBe('39\n');
  });

  test('records each batch with the next batch\'s marks, one store write a batch and one more, never owning what is not in place', async () => {
    const files = Array.from({ length: 600 }, (_, i) => file(`/srv/many/f${i}`, `${i}\n`));
    const writes: Array<{ owned: number; applying: number; inPlace: boolean }> = [];
    const update = deps.state.update.bind(deps.state);
    deps.state.update = async (change) => {
      const next = await update(change);
      // Whatever a write says the host owns is on the machine by then.
      const inPlace = (await Promise.all(next.owned.resources.map((entry) => exists(entry.key.slice('file:'.length).slice(1))))).every(Boolean);
      writes.push({ owned: next.owned.resources.length, applying: next.applying.length, inPlace });
      return next;
    };
    const results = await converge(files, { removeUndeclared: true }, deps);
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(600);
    // Three batches (256, 256, 88): the first marked alone, each later one marked in the write
    // that records the one before, the last recorded alone.
    expect(writes).toEqual([
      { owned: 0, applying: 256, inPlace: true },
      { owned: 256, applying: 256, inPlace: true },
      { owned: 512, applying: 88, inPlace: true },
      { owned: 600, applying: 0, inPlace: true },
    ]);
  });

  test('gives the event loop its turn part way through a batch\'s applies', async () => {
    const files = Array.from({ length: 256 }, (_, i) => file(`/srv/turns/f${i}`, `${i}\n`));
    // There already, so that nothing is prepared (and waited for) once the applies have begun.
    await fs.mkdir(path.join(root, 'srv/turns'), { recursive: true });
    let applied = 0;
    const counting: Applier<FileResource> = { ...fileApplier, apply: async (resource, ctx) => { applied += 1; return fileApplier.apply(resource, ctx); } };
    deps.appliers = { ...deps.appliers, file: counting };
    // How many applies were done at each turn of the event loop while converge ran.
    const atTurns: number[] = [];
    let running = true;
    const turn = (): void => { atTurns.push(applied); if (running) setImmediate(turn); };
    setImmediate(turn);
    await converge(files, { removeUndeclared: true }, deps);
    running = false;
    expect(applied).toBe(256);
    expect(atTurns.some((count) => count > 0 && count < 256)).toBe(true);
  });

  test('corrects drift: a managed file edited by hand is put back', async () => {
    const declared = [file('/etc/motd', 'managed\n')];
    await converge(declared, { removeUndeclared: true }, deps);
    await fs.writeFile(path.join(root, 'etc/motd'), 'edited by hand\n');
    const results = await converge(declared, { removeUndeclared: true }, deps);
    expect(results[0]).toMatchObject({ outcome: 'applied', detail: expect.stringMatching(/content differs/) });
    expect(await read('etc/motd')).toBe('managed\n');
  });

  test('removes what is no longer declared, files before the directory holding them', async () => {
    await converge([dir('/srv/app'), file('/srv/app/a', 'a'), file('/srv/app/b', 'b')], { removeUndeclared: true }, deps);
    const results = await converge([], { removeUndeclared: true }, deps);
    expect(results.map((r) => [r.key, r.outcome])).toEqual([
      ['file:/srv/app/a', 'removed'],
      ['file:/srv/app/b', 'removed'],
      ['directory:/srv/app', 'removed'],
    ]);
    expect(await exists('srv/app')).toBe(false);
    expect(ownedKeys()).toEqual([]);
  });

  test('removes many owned files in batches, with two store writes a batch rather than two a file, owning nothing half-way', async () => {
    const files = Array.from({ length: 300 }, (_, i) => file(`/srv/many/f${i}`, `${i}\n`));
    await converge(files, { removeUndeclared: true }, deps);
    const writes: Array<{ owned: number; applying: number }> = [];
    const update = deps.state.update.bind(deps.state);
    deps.state.update = (change) => update((s) => {
      const next = change(s);
      writes.push({ owned: next.owned.resources.length, applying: next.applying.length });
      return next;
    });
    const results = await converge([], { removeUndeclared: true }, deps);
    expect(results.filter((r) => r.outcome === 'removed')).toHaveLength(300);
    expect(await exists('srv/many')).toBe(false);
    expect(ownedKeys()).toEqual([]);
    expect(deps.state.current().applying).toEqual([]);
    // Three batches (128, 128, 44), each marked before it is touched and cleared after, then the
    // made directories forgotten: the store is never told a file is gone before it is.
    expect(writes.slice(0, 6)).toEqual([
      { owned: 172, applying: 128 }, { owned: 172, applying: 0 },
      { owned: 44, applying: 128 }, { owned: 44, applying: 0 },
      { owned: 0, applying: 44 }, { owned: 0, applying: 0 },
    ]);
    expect(writes.length).toBeLessThanOrEqual(7);
  });

  test('never removes what it does not own, and keeps owning what it could not remove', async () => {
    await converge([dir('/srv/app')], { removeUndeclared: true }, deps);
    await fs.writeFile(path.join(root, 'srv/app/someone-elses'), 'x');
    const results = await converge([], { removeUndeclared: true }, deps);
    expect(results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/still owned.*someone-elses/) });
    expect(await exists('srv/app/someone-elses')).toBe(true);
    expect(ownedKeys()).toEqual(['directory:/srv/app']);
  });

  test('something already on the machine goes through adoption instead of being overwritten', async () => {
    await fs.mkdir(path.join(root, 'etc'), { recursive: true });
    await fs.writeFile(path.join(root, 'etc/motd'), 'the machine says\n', { mode: 0o644 });
    const results = await converge([file('/etc/motd', 'the mesh says\n')], { removeUndeclared: true }, deps);
    expect(results[0]).toMatchObject({ outcome: 'kept' });
    expect(await read('etc/motd')).toBe('the machine says\n');
    expect(ownedKeys()).toEqual([]);
    expect(deps.state.current().briefing?.lines).toEqual([{ status: 'kept', subject: 'file:/etc/motd', detail: expect.stringMatching(/content differs/) }]);
  });

  test('a key marked applying (a host killed mid-apply) is its own work, not something to adopt', async () => {
    await fs.mkdir(path.join(root, 'etc'), { recursive: true });
    await fs.writeFile(path.join(root, 'etc/motd'), 'half', { mode: 0o644 });
    await deps.state.update((s) => ({ ...s, applying: ['file:/etc/motd'] }));
    const results = await converge([file('/etc/motd', 'whole\n')], { removeUndeclared: true }, deps);
    expect(results[0]!.outcome).toBe('applied');
    expect(deps.state.current().applying).toEqual([]);
    expect(ownedKeys()).toEqual(['file:/etc/motd']);
    expect(deps.state.current().briefing).toBeNull();
  });

  test('half-made work of a host killed mid-apply is removed when it is no longer declared', async () => {
    await fs.mkdir(path.join(root, 'etc'), { recursive: true });
    await fs.writeFile(path.join(root, 'etc/half'), 'half');
    await deps.state.update((s) => ({ ...s, applying: ['file:/etc/half'] }));
    const results = await converge([], { removeUndeclared: true }, deps);
    expect(results).toEqual([{ key: 'file:/etc/half', shape: 'file', outcome: 'removed' }]);
    expect(await exists('etc/half')).toBe(false);
    expect(deps.state.current().applying).toEqual([]);
  });

  test('a resource whose read-back still differs is failed and not recorded', async () => {
    const liar: Applier = {
      ...fileApplier,
      async apply() { return {}; }, // says it worked, changes nothing
    } as Applier;
    deps.appliers = { file: liar as never };
    const results = await converge([file('/etc/motd', 'x')], { removeUndeclared: true }, deps);
    expect(results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/reading back shows: no file at \/etc\/motd/) });
    expect(ownedKeys()).toEqual([]);
    expect(deps.state.current().applying).toEqual([]);
  });

  test('a shape this host has no applier for is refused, not guessed', async () => {
    const results = await converge([Resource.parse({ shape: 'package', name: 'nginx' })], { removeUndeclared: true }, deps);
    expect(results[0]).toMatchObject({ outcome: 'refused', detail: 'this host does not take package resources' });
  });

  test('every record reaches the store file, not only memory', async () => {
    await converge([file('/etc/a', 'a'), file('/etc/b', 'b')], { removeUndeclared: true }, deps);
    const onDisk = await new HostStore(stateDir).load();
    expect(onDisk.state.owned.resources.map((r) => r.key).sort()).toEqual(['file:/etc/a', 'file:/etc/b']);
  });

  test('an aborted pass stops between resources', async () => {
    const controller = new AbortController();
    const stopping: Applier = {
      ...fileApplier,
      async apply(resource, ctx) { const outcome = await fileApplier.apply(resource as never, ctx); controller.abort(); return outcome; },
    } as Applier;
    deps.appliers = { file: stopping as never };
    deps.ctx = { ...deps.ctx, signal: controller.signal };
    const results = await converge([file('/etc/a', 'a'), file('/etc/b', 'b')], { removeUndeclared: true }, deps);
    expect(results.map((r) => r.key)).toEqual(['file:/etc/a']);
    expect(await exists('etc/b')).toBe(false);
  });
});

describe('converge and the directories it made on the way', () => {
  test('takes them away once nothing declared lies under them, deepest first, and never one the machine has put a file in', async () => {
    await converge([file('/srv/one/deep/a.conf', 'a'), file('/opt/two/b.conf', 'b')], { removeUndeclared: true }, deps);
    expect([...deps.state.current().made_directories].sort()).toEqual(['/opt', '/opt/two', '/srv', '/srv/one', '/srv/one/deep']);

    // The machine's own file in /opt/two: that directory, and /opt above it, stay.
    await fs.writeFile(path.join(root, 'opt/two/theirs.txt'), 'not the host\'s');
    await converge([file('/srv/one/deep/a.conf', 'a')], { removeUndeclared: true }, deps);
    expect(await exists('opt/two/theirs.txt')).toBe(true);
    expect(await exists('srv/one/deep/a.conf')).toBe(true);
    expect([...deps.state.current().made_directories].sort()).toEqual(['/opt', '/opt/two', '/srv', '/srv/one', '/srv/one/deep']);

    // A release: nothing declared. What the host made and is empty goes; what holds their file stays.
    await converge([], { removeUndeclared: true }, deps);
    expect(await exists('srv')).toBe(false);
    expect(await exists('opt/two/theirs.txt')).toBe(true);
    expect([...deps.state.current().made_directories].sort()).toEqual(['/opt', '/opt/two']);

    // Once their file is gone, the next pass finishes the job.
    await fs.rm(path.join(root, 'opt/two/theirs.txt'));
    await converge([], { removeUndeclared: true }, deps);
    expect(await exists('opt')).toBe(false);
    expect(deps.state.current().made_directories).toEqual([]);
  });

  test('leaves them while only an overlay is held, and forgets one that is declared as a directory of its own', async () => {
    await converge([file('/srv/app/conf.d/x.conf', 'x')], { removeUndeclared: true }, deps);
    await converge([], { removeUndeclared: false }, deps);
    expect(await exists('srv/app/conf.d')).toBe(true);

    await converge([dir('/srv/app'), file('/srv/app/conf.d/x.conf', 'x')], { removeUndeclared: true }, deps);
    expect([...deps.state.current().made_directories].sort()).toEqual(['/srv', '/srv/app/conf.d']);
    expect(ownedKeys()).toContain('directory:/srv/app');
  });
});

describe('converge and what leads away from the declared path', () => {
  let outside: string;
  beforeEach(async () => { outside = await fs.mkdtemp(path.join(os.tmpdir(), 'converge-outside-')); });
  afterEach(async () => { await fs.rm(outside, { recursive: true, force: true }); });

  test('an owned file replaced by a hard link to a private file outside the root is replaced, and the outside file keeps its mode, owner and content', async () => {
    const declared = [Resource.parse({ shape: 'file', path: '/etc/app.conf', mode: '0644', content: { text: 'port=80\n' } })];
    expect((await converge(declared, { removeUndeclared: true }, deps)).map((r) => r.outcome)).toEqual(['applied']);
    const secret = path.join(outside, 'id_ed25519');
    await fs.writeFile(secret, 'port=80\n', { mode: 0o600 });
    await fs.chown(secret, 1000, 1000);
    await fs.rm(path.join(root, 'etc/app.conf'));
    await fs.link(secret, path.join(root, 'etc/app.conf'));

    const reconciled = await converge(declared, { removeUndeclared: true }, deps);
    expect(reconciled.map((r) => r.outcome)).toEqual(['applied']);
    const kept = await fs.stat(secret);
    expect([kept.mode & 0o7777, kept.uid, kept.gid, kept.nlink]).toEqual([0o600, 1000, 1000, 1]);
    expect(await fs.readFile(secret, 'utf8')).toBe('port=80\n');
    expect(((await fs.stat(path.join(root, 'etc/app.conf'))).mode & 0o7777)).toBe(0o644);
  });

  test('a file declared through a link into the state directory is not written, and nothing is planted among the kept originals', async () => {
    await fs.mkdir(path.join(stateDir, 'originals'), { recursive: true });
    await fs.symlink('var/lib/mesh-host/originals', path.join(root, 'srv'));
    const planted = file('/srv/file/etc/app.conf/content', 'handed back later\n');
    const results = await converge([planted, file('/etc/motd', 'hello\n')], { removeUndeclared: true }, deps);
    // Unreadable and not the host's, so adoption has it (the stand-in here keeps it): not written.
    expect(results.map((r) => [r.key, r.outcome])).toEqual([['file:/srv/file/etc/app.conf/content', 'kept'], ['file:/etc/motd', 'applied']]);
    expect(results[0]?.detail).toMatch(/leads into the host's state directory .*srv is a symbolic link to/);
    expect(await fs.readdir(path.join(stateDir, 'originals'))).toEqual([]);
    expect(ownedKeys()).toEqual(['file:/etc/motd']);
  });

  test('an action that times out leaving a background child does not hold the pass: what follows is applied and the child is ended', async () => {
    deps.appliers = { ...deps.appliers, action: actionApplier };
    const lingering = Resource.parse({ shape: 'action', name: 'start-agent', argv: ['sh', '-c', 'sleep 60 & echo $!; echo started; wait'], timeout_seconds: 1, guard: { creates: '/var/agent.ready' } });
    const results = await converge([lingering, file('/etc/motd', 'after the action\n')], { removeUndeclared: true }, deps);
    expect(results.map((r) => [r.key, r.outcome])).toEqual([['action:start-agent', 'failed'], ['file:/etc/motd', 'applied']]);
    const pid = Number.parseInt(/output:\n {2}(\d+)/.exec(results[0]?.detail ?? '')?.[1] ?? '', 10);
    expect(pid).toBeGreaterThan(1);
    try {
      expect(await waitUntilGone(pid)).toBe(true);
    } finally {
      killLeftover(pid);
    }
    expect(await read('etc/motd')).toBe('after the action\n');
  }, 30_000);
});
