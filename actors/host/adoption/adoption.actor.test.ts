import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Briefing, briefingOutcome, formatBriefing, type BriefingLine } from '../../../schema/briefing';
import { emptyHostState } from '../../../schema/host-state';
import { FileResource, type Resource } from '../../../schema/resource';
import { ProcessRunner } from '../../shared/process/command-runner';
import type { Applier, ApplyContext } from '../appliers/applier';
import { fileApplier } from '../appliers/file.applier';
import { converge, type ConvergeDeps } from '../reconcile/converge';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { adoptionInputFor, createAdopter } from './adoption.actor';
import { MAX_SUBJECT } from './briefing-subject';
import { ORIGINALS_DIR, originalsDirFor } from './originals-dir';
import { refreshLookAt } from './refresh-look-at';

// The adopter against real files in a temporary root, with the real file applier: what the
// machine had is kept under the state directory, and the machine's files are never written.

let root: string;
let scratch: string;
let ctx: ApplyContext;
const adopter = createAdopter();
const applier = fileApplier as Applier;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-root-')));
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-scratch-')));
  ctx = { root, stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

function file(path: string, text: string): Resource {
  return FileResource.parse({ shape: 'file', path, content: { text } });
}

async function onMachine(path: string, text: string, mode = 0o644): Promise<void> {
  const real = join(root, path);
  await mkdir(dirname(real), { recursive: true });
  await writeFile(real, text);
  await chmod(real, mode);
}

const machineText = (path: string) => readFile(join(root, path), 'utf8');

/** Observes the resource as converge does, then hands it to the adopter. */
async function adopt(resource: Resource) {
  return adopter.adopt(resource, applier, await applier.observe(resource, ctx), ctx);
}

/** Makes adoption fail to keep this resource's original: a plain file sits where its folder goes. */
async function blockOriginals(resource: Resource): Promise<string> {
  const dir = adoptionInputFor(resource, ctx).originalsDir;
  await mkdir(dirname(dir), { recursive: true });
  await writeFile(dir, 'in the way\n');
  return dir;
}

/** Puts the folder a resource is in behind a link that leads outside the root. */
async function leadOutside(folder: string): Promise<void> {
  const outside = join(scratch, 'elsewhere');
  await rename(join(root, folder), outside);
  await symlink(outside, join(root, folder));
}

function briefingOf(lines: BriefingLine[]): Briefing {
  return Briefing.parse({ node: 'workstation', adopted_at: '2026-08-27T14:02:00Z', lines, look_at: [] });
}

describe('createAdopter', () => {
  test('a briefing with an ok, a kept, an unknown and a failed line derives failed', async () => {
    await onMachine('/etc/app/ok.conf', 'same\n');
    await onMachine('/etc/app/kept.conf', 'chosen by hand\n');
    await onMachine('/etc/app/failed.conf', 'same\n');
    await onMachine('/srv/tools/unknown.conf', 'whatever\n');
    const failing = file('/etc/app/failed.conf', 'same\n');
    await blockOriginals(failing);
    await leadOutside('/srv/tools');

    const decisions = [
      await adopt(file('/etc/app/ok.conf', 'same\n')),
      await adopt(file('/etc/app/kept.conf', 'declared\n')),
      await adopt(file('/srv/tools/unknown.conf', 'whatever\n')),
      await adopt(failing),
    ];

    expect(decisions.map((d) => [d.line.subject, d.line.status, d.take])).toEqual([
      ['file:/etc/app/ok.conf', 'ok', true],
      ['file:/etc/app/kept.conf', 'kept', false],
      ['file:/srv/tools/unknown.conf', 'unknown', false],
      ['file:/etc/app/failed.conf', 'failed', false],
    ]);
    const briefing = briefingOf(decisions.map((d) => d.line));
    expect(briefingOutcome(briefing)).toBe('failed');
    expect(formatBriefing(briefing)).toMatch(/^outcome {4}failed$/m);
    expect(decisions[2].line.detail).toMatch(/^could not be read: .*leads outside the root/);
    expect(decisions[3].line.detail).toMatch(/^the original could not be kept, so nothing was written: /);
  });

  test('a briefing with only ok and kept lines derives kept', async () => {
    await onMachine('/etc/app/ok.conf', 'same\n');
    await onMachine('/etc/app/kept.conf', 'chosen by hand\n');
    const lines = [(await adopt(file('/etc/app/ok.conf', 'same\n'))).line, (await adopt(file('/etc/app/kept.conf', 'declared\n'))).line];
    expect(briefingOutcome(briefingOf(lines))).toBe('kept');
  });

  test('on conflict the original is kept with the machine\'s bytes and the machine is left as it was', async () => {
    await onMachine('/etc/docker/daemon.json', '{"storage-driver":"overlay2"}\n', 0o600);
    const decision = await adopt(file('/etc/docker/daemon.json', '{"storage-driver":"btrfs"}\n'));

    expect(decision.take).toBe(false);
    expect(decision.line.status).toBe('kept');
    expect(decision.line.detail).toContain('content differs');
    expect(decision.line.detail).toContain('mode is 0600, declared 0644');
    expect(decision.line.detail).toContain("the machine's value wins");
    const keptAt = decision.line.original_kept_at;
    expect(keptAt).toBe(join(originalsDirFor(ctx.stateDir, 'file:/etc/docker/daemon.json'), 'etc/docker/daemon.json'));
    expect(decision.line.detail).toContain(`original kept at ${keptAt}`);
    expect(await readFile(keptAt!, 'utf8')).toBe('{"storage-driver":"overlay2"}\n');
    expect(await machineText('/etc/docker/daemon.json')).toBe('{"storage-driver":"overlay2"}\n');
    expect((await stat(join(root, 'etc/docker/daemon.json'))).mode & 0o7777).toBe(0o600);
  });

  test('keeps the original before the host first writes over what it took', async () => {
    // The host owns what matched; a later declaration rewrites it. The machine's own bytes
    // must still be there afterwards, because they were kept before the first write.
    await onMachine('/etc/motd', 'welcome to the lab\n');
    const store = new HostStore(ctx.stateDir);
    const deps: ConvergeDeps = {
      state: new StateHandle(store, emptyHostState()),
      appliers: { file: fileApplier },
      ctx,
      adopter,
      now: () => new Date('2026-08-27T14:02:00Z'),
      nodeName: () => 'workstation',
    };

    const first = await converge([file('/etc/motd', 'welcome to the lab\n')], { removeUndeclared: true }, deps);
    expect(first.map((r) => r.outcome)).toEqual(['unchanged']);
    const owned = deps.state.current().owned.resources;
    expect(owned).toEqual([expect.objectContaining({ key: 'file:/etc/motd', adopted: true })]);
    const keptAt = owned[0].original_kept_at!;

    const second = await converge([file('/etc/motd', 'managed by the mesh\n')], { removeUndeclared: true }, deps);
    expect(second.map((r) => r.outcome)).toEqual(['applied']);
    expect(await machineText('/etc/motd')).toBe('managed by the mesh\n');
    expect(await readFile(keptAt, 'utf8')).toBe('welcome to the lab\n');

    // What the store holds reads as a briefing a person can act on.
    await refreshLookAt(deps.state);
    const briefing = (await store.load()).state.briefing!;
    expect(briefing.lines).toEqual([expect.objectContaining({ status: 'ok', subject: 'file:/etc/motd', original_kept_at: keptAt })]);
    expect(briefingOutcome(briefing)).toBe('ok');
    expect(briefing.look_at).toEqual([]);
  });

  test('when the original cannot be kept, nothing is written and the line is failed', async () => {
    await onMachine('/etc/app.conf', 'by hand\n');
    const resource = file('/etc/app.conf', 'declared\n');
    const blocked = await blockOriginals(resource);
    const deps: ConvergeDeps = {
      state: new StateHandle(new HostStore(ctx.stateDir), emptyHostState()),
      appliers: { file: fileApplier },
      ctx,
      adopter,
      now: () => new Date('2026-08-27T14:02:00Z'),
      nodeName: () => 'workstation',
    };

    const results = await converge([resource], { removeUndeclared: true }, deps);

    expect(results.map((r) => r.outcome)).toEqual(['kept']);
    expect(await machineText('/etc/app.conf')).toBe('by hand\n');
    expect(await readFile(blocked, 'utf8')).toBe('in the way\n');
    const state = deps.state.current();
    expect(state.owned.resources).toEqual([]);
    expect(state.briefing!.lines).toEqual([expect.objectContaining({ status: 'failed', subject: 'file:/etc/app.conf' })]);
    expect(state.briefing!.lines[0]).not.toHaveProperty('original_kept_at');
  });

  test('a machine that stops being readable while its original is kept is unknown, with nothing kept', async () => {
    await onMachine('/srv/app/app.conf', 'by hand\n');
    const resource = file('/srv/app/app.conf', 'declared\n');
    const observation = await applier.observe(resource, ctx);
    expect(observation.unreadable).toBeUndefined();
    await leadOutside('/srv/app');

    const decision = await adopter.adopt(resource, applier, observation, ctx);

    expect(decision).toEqual({
      take: false,
      line: { status: 'unknown', subject: 'file:/srv/app/app.conf', detail: expect.stringMatching(/^could not be read while keeping the original, so nothing was written: .*leads outside the root/) },
    });
    expect(await readFile(join(scratch, 'elsewhere/app.conf'), 'utf8')).toBe('by hand\n');
    expect(await readdir(join(ctx.stateDir, ORIGINALS_DIR)).catch(() => [])).toEqual([]);
  });

  test('a fault inside adoption comes back as a failed line instead of stopping the pass', async () => {
    // An observation without its differences stands for any defect on the way to a decision.
    const broken = { present: true } as unknown as Parameters<typeof adopter.adopt>[2];
    const decision = await adopter.adopt(file('/etc/app.conf', 'x\n'), applier, broken, ctx);
    expect(decision.take).toBe(false);
    expect(decision.line).toEqual({ status: 'failed', subject: 'file:/etc/app.conf', detail: expect.stringMatching(/^adoption stopped: /) });
  });

  test('the subject is the resource key, shortened in the middle when it is too long', async () => {
    const path = `/srv/${'deep/'.repeat(40)}settings.conf`;
    await onMachine(path, 'x\n');
    const decision = await adopt(file(path, 'x\n'));
    expect(decision.line.status).toBe('ok');
    expect(decision.line.subject.length).toBe(MAX_SUBJECT);
    expect(decision.line.subject.startsWith('file:/srv/deep/')).toBe(true);
    expect(decision.line.subject.endsWith('/deep/settings.conf')).toBe(true);
    expect(decision.line.subject).toContain('…');
  });
});
