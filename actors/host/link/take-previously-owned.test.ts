import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as z from 'zod';
import type { Declaration } from '../../../schema/declaration';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import type { OwnedResource } from '../../../schema/owned';
import { Resource, SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import { directoryApplier } from '../appliers/directory.applier';
import { fileApplier } from '../appliers/file.applier';
import { ProcessRunner } from '../../shared/process/command-runner';
import { converge, type Adopter } from '../reconcile/converge';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { takePreviouslyOwned, withTakenBack, type TakeBackDeps } from './take-previously-owned';

// What a controller (or whoever holds its signing key) can have a rebuilt host remove through
// previously_owned, tried against real files in a temporary root with the real appliers.

let root: string;
let stateDir: string;
let deps: TakeBackDeps;

const entry = (key: string, extra: Partial<OwnedResource> = {}): OwnedResource => ({
  key, shape: key.slice(0, key.indexOf(':')) as OwnedResource['shape'], digest: 'a'.repeat(64), recorded_at: '2026-11-01T00:00:00Z', ...extra,
});
const file = (p: string, text: string): Resource => Resource.parse({ shape: 'file', path: p, content: { text } } satisfies z.input<typeof Resource>);
const declaration = (resources: Resource[], owned: OwnedResource[]): Declaration => ({
  node: 'a', epoch: 1, generation: 3, kind: 'full', issued_at: '2026-12-01T00:00:00Z', resources, previously_owned: { resources: owned },
});
const write = async (p: string, text: string): Promise<void> => {
  await fs.mkdir(path.dirname(path.join(root, p)), { recursive: true });
  await fs.writeFile(path.join(root, p), text);
};
const exists = (p: string): Promise<boolean> => fs.lstat(path.join(root, p)).then(() => true, () => false);

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'take-back-root-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
  deps = {
    appliers: { file: fileApplier, directory: directoryApplier },
    ctx: { root, stateDir, runner: new ProcessRunner(), hostUnit: 'nox-mesh-host' },
    rules: { shapes: SHAPES_FOR_HOST_KIND.resident },
  };
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('taking back what a node owned before its store was lost', () => {
  test('an undeclared file and directory the host could have made, there now, are taken', async () => {
    await write('etc/app/old.conf', 'old\n');
    const back = await takePreviouslyOwned(declaration([], [entry('file:/etc/app/old.conf'), entry('directory:/etc/app')]), emptyHostState(), deps);
    expect(back.taken.map((e) => e.key)).toEqual(['file:/etc/app/old.conf', 'directory:/etc/app']);
    expect(back.passedOver).toEqual([]);
  });

  test('nothing reached through a symbolic link is taken, even one that stays inside the root', async () => {
    await write('real/passwd', 'root:x:0:0\n');
    await fs.symlink(path.join(root, 'real'), path.join(root, 'etc'));
    await fs.symlink(path.join(root, 'real/passwd'), path.join(root, 'leaf'));
    const back = await takePreviouslyOwned(declaration([], [entry('file:/etc/passwd'), entry('file:/leaf')]), emptyHostState(), deps);
    expect(back.taken).toEqual([]);
    expect(back.passedOver).toEqual([
      { key: 'file:/etc/passwd', why: expect.stringMatching(/^\/etc is a symbolic link/) },
      { key: 'file:/leaf', why: expect.stringMatching(/^\/leaf is a symbolic link/) },
    ]);
  });

  test('what adoption took from the machine, the host\'s own store and unit, and other shapes are passed over', async () => {
    await write('etc/motd', 'the machine\'s own\n');
    await write('var/lib/mesh-host/state.json', '{}');
    await write('etc/systemd/system/nox-mesh-host.service', '[Unit]\n');
    const back = await takePreviouslyOwned(declaration([], [
      entry('file:/etc/motd', { adopted: true, original_kept_at: '/var/lib/mesh-host/originals/x' }),
      entry('file:/var/lib/mesh-host/state.json'),
      entry('file:/etc/systemd/system/nox-mesh-host.service'),
      entry('service:sshd'),
      entry('container:db'),
      entry('package:openssh-server'),
    ]), emptyHostState(), deps);
    expect(back.taken).toEqual([]);
    expect(back.passedOver.map((p) => p.key)).toEqual([
      'file:/etc/motd', 'file:/var/lib/mesh-host/state.json', 'file:/etc/systemd/system/nox-mesh-host.service', 'service:sshd', 'container:db', 'package:openssh-server',
    ]);
    expect(back.passedOver[0]?.why).toMatch(/adoption took it over from the machine/);
    expect(back.passedOver[1]?.why).toMatch(/state directory/);
  });

  test('a shape this host does not take, something absent, or another kind of thing at the path is passed over', async () => {
    await fs.mkdir(path.join(root, 'srv/data'), { recursive: true });
    const episodic = { ...deps, rules: { shapes: ['directory'] as const } };
    await write('etc/x.conf', 'x\n');
    const foreign = await takePreviouslyOwned(declaration([], [entry('file:/etc/x.conf')]), emptyHostState(), episodic);
    expect([foreign.taken, foreign.passedOver.map((p) => p.why)]).toEqual([[], ['this host does not take file resources']]);
    const back = await takePreviouslyOwned(declaration([], [entry('file:/gone.conf'), entry('file:/srv/data'), entry('directory:/etc/x.conf')]), emptyHostState(), deps);
    expect(back.taken).toEqual([]);
    expect(back.passedOver.map((p) => p.why)).toEqual([
      expect.stringMatching(/^not on the machine/),
      expect.stringMatching(/a directory is there now, not the file/),
      expect.stringMatching(/a file is there now, not the directory/),
    ]);
  });

  test('a declared file is taken only when the machine already holds it as declared; what the store holds is the node\'s word', async () => {
    await write('etc/same.conf', 'same\n');
    await write('etc/edited.conf', 'edited by hand\n');
    await write('etc/held.conf', 'held\n');
    const state: HostState = { ...emptyHostState(), owned: { resources: [entry('file:/etc/held.conf', { digest: 'b'.repeat(64) })] } };
    const back = await takePreviouslyOwned(declaration(
      [file('/etc/same.conf', 'same\n'), file('/etc/edited.conf', 'declared\n')],
      [entry('file:/etc/same.conf'), entry('file:/etc/edited.conf'), entry('file:/etc/held.conf')],
    ), state, deps);
    expect(back.taken.map((e) => e.key)).toEqual(['file:/etc/same.conf']);
    expect(back.passedOver).toEqual([{ key: 'file:/etc/edited.conf', why: expect.stringMatching(/differs from the declaration.*adoption decides/) }]);
    expect(withTakenBack(state, back).owned.resources.find((e) => e.key === 'file:/etc/held.conf')?.digest).toBe('b'.repeat(64));
  });

  test('the next pass removes what was taken back and is not declared, and leaves a person\'s file beside it', async () => {
    await write('srv/app/old.conf', 'old\n');
    await write('srv/app/note.txt', 'mine\n');
    const back = await takePreviouslyOwned(declaration([], [entry('file:/srv/app/old.conf'), entry('directory:/srv/app')]), emptyHostState(), deps);
    const state = new StateHandle(new HostStore(stateDir), withTakenBack({ ...emptyHostState(), store_rebuilt_at: '2026-12-01T00:00:00Z' }, back));
    expect(state.current().store_rebuilt_at).toBeUndefined();
    const adopter: Adopter = { adopt: () => Promise.reject(new Error('nothing is declared, so nothing is adopted')) };
    const results = await converge([], { removeUndeclared: true }, { state, appliers: deps.appliers, ctx: deps.ctx, adopter, now: () => new Date(), nodeName: () => 'a' });
    expect(await exists('srv/app/old.conf')).toBe(false);
    expect(await fs.readFile(path.join(root, 'srv/app/note.txt'), 'utf8')).toBe('mine\n');
    expect(results.find((r) => r.key === 'directory:/srv/app')).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/note\.txt/) });
  });

  test('what adoption took since the rebuild that the host had made itself is its own again: the copy and the line go', async () => {
    await write('etc/mesh/hosts', '10.0.0.1 a\n');
    const keptAt = path.join(stateDir, 'originals', 'file:%2Fetc%2Fmesh%2Fhosts', 'etc', 'mesh', 'hosts');
    const state: HostState = {
      ...emptyHostState(),
      store_rebuilt_at: '2026-12-01T00:00:00Z',
      owned: { resources: [entry('file:/etc/mesh/hosts', { adopted: true, original_kept_at: keptAt })] },
      briefing: { node: 'a', adopted_at: '2026-12-01T00:00:01Z', lines: [{ status: 'ok', subject: 'file:/etc/mesh/hosts', detail: 'matches' }], look_at: [] },
    };
    const back = await takePreviouslyOwned(declaration([], [entry('file:/etc/mesh/hosts')]), state, deps);
    expect(back.reclaimed.map((e) => e.key)).toEqual(['file:/etc/mesh/hosts']);
    const after = withTakenBack(state, back);
    expect(after.owned.resources).toEqual([entry('file:/etc/mesh/hosts')]);
    expect(after.briefing).toBeNull();
    expect(after.store_rebuilt_at).toBeUndefined();
    // What the machine had adopted from it before the loss is not reclaimed: it stays the machine's.
    const theirs = await takePreviouslyOwned(declaration([], [entry('file:/etc/mesh/hosts', { adopted: true })]), state, deps);
    expect(theirs.reclaimed).toEqual([]);
  });
});
