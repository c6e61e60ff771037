/**
 * The adoption machine's paths, from adoption to hand-back, walked by the real host: the
 * reconcile engine (converge) with the real adopter, the real file applier and the real store,
 * against real files in a temporary root and state directory.
 *
 * Each `resource.observed` sample is made true on disk before the host looks: the declared
 * bytes for `matches`, a person's own bytes for `conflicts`, the file's folder behind a link
 * that leads outside the root for `unreadable`; then a pass with the resource declared runs. A
 * `resource.released` is what an operator does: from `taken`, the declaration is first changed
 * (the host writes over what it adopted) and then dropped; from `looking`, the host first makes
 * the file itself on an empty machine and then it is dropped. `after a kill` is the same, with
 * the first host stopped for good in the middle of undoing it and a new host started on the
 * store it left. From a conflict, `resource.released` is the declaration dropped (the host lets
 * the line and its copy go), and `resource.applied` is a person clearing the way (the link put
 * back, the originals folder unblocked, the machine's file removed) and a pass that then applies
 * the declaration: the conflict resolved.
 *
 * The only thing the rig adds is a hold in front of the applier's keepOriginal, handBack and
 * remove, so a path can look at the system while they are asked and before they run. How the
 * hold is let go is how they end: as things are, for the common outcome; after losing the kept
 * copy (or, after a kill, after the first host had put the original back), for "nothing kept";
 * after putting a directory where the file was, for "not the original"; after damaging the
 * copy's record, for a hand-back that fails; after putting a directory where the host's own file
 * was, for a removal that fails. Every state's assertion reads the files on disk, what the store
 * holds and the briefing, and the real pass's result.
 */
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AdoptionContext, AdoptionObservation, AdoptionOutput } from '../machines/adoption.machine';
import { adoptionMachine, couldNotRead, isReleaseOutcome } from '../machines/adoption.machine';
import type { BriefingLine } from '../schema/briefing';
import { emptyHostState } from '../schema/host-state';
import type { ResourceResult } from '../schema/report';
import { FileResource } from '../schema/resource';
import { adoptionInputFor, createAdopter } from '../actors/host/adoption/adoption.actor';
import { lineOf } from '../actors/host/adoption/hand-back';
import { MachineUnreadable, OriginalNotKept } from '../actors/host/adoption/keep-original-errors';
import { ORIGINALS_DIR } from '../actors/host/adoption/originals-dir';
import type { Applier, ApplyContext } from '../actors/host/appliers/applier';
import { fileApplier } from '../actors/host/appliers/file.applier';
import { PassMemo } from '../actors/host/appliers/pass-memo';
import { converge, type ConvergeDeps } from '../actors/host/reconcile/converge';
import { HostStore } from '../actors/host/store/host-store';
import { StateHandle } from '../actors/host/store/state-handle';
import { ProcessRunner } from '../actors/shared/process/command-runner';
import { describeModel, doneEvent, errorEvent } from './harness';

const PATH = '/srv/app/app.conf';
const KEY = `file:${PATH}`;
const DECLARED = 'listen 80\n';
const BY_HAND = 'listen 8080 # chosen by hand\n';
const REWRITTEN = 'listen 80 # rewritten by the mesh\n';
// The machine's own file belongs to someone other than the host's default (root), with a mode of its own.
const THEIRS = 1234;
const MODE = 0o640;
const resource = FileResource.parse({ shape: 'file', path: PATH, content: { text: DECLARED }, mode: '0640', owner: `${THEIRS}`, group: `${THEIRS}` });
const rewritten = FileResource.parse({ shape: 'file', path: PATH, content: { text: REWRITTEN }, mode: '0644' });
const modelInput = adoptionInputFor(resource, { stateDir: '/var/lib/mesh-host' });

/** Holds one applier call until a driver lets it go. */
class Hold {
  asked = 0;
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => { this.release = resolve; });
  private notify: (() => void) | undefined;

  wait(): Promise<void> {
    this.asked += 1;
    this.notify?.();
    return this.released;
  }

  /** Resolves once the call has been asked for (at once when it already was). */
  whenAsked(): Promise<void> {
    return this.asked > 0 ? Promise.resolve() : new Promise((resolve) => { this.notify = resolve; });
  }

  open(): void {
    this.release();
  }
}

/** One host process: its state over the store, and its file applier behind holds. */
interface Host {
  deps: ConvergeDeps;
  keep: Hold;
  handBack: Hold;
  remove: Hold;
  /** The pass under way or last run, and its results by key once it ended. */
  pass: Promise<ResourceResult[]> | null;
  results: Map<string, ResourceResult> | null;
  /** What the pass under way has resolved once and reuses (converge makes one per pass). */
  memo: PassMemo;
}

interface Rig {
  root: string;
  scratch: string;
  ctx: ApplyContext;
  store: HostStore;
  host: Host;
  /** What the machine's file held once the last driver arranged it; null before. */
  arranged: string | null;
  /** What the machine had there before the host came (what adoption keeps); null before. */
  original: string | null;
}

function startHost(rig: Pick<Rig, 'ctx' | 'store'>, state: StateHandle): Host {
  const holds = { keep: new Hold(), handBack: new Hold(), remove: new Hold() };
  const held: Applier = {
    ...(fileApplier as Applier),
    async keepOriginal(r, c, dir) {
      await holds.keep.wait();
      return fileApplier.keepOriginal(r as FileResource, c, dir);
    },
    async handBack(key, c, dir) {
      await holds.handBack.wait();
      return fileApplier.handBack!(key, c, dir);
    },
    async remove(key, c) {
      await holds.remove.wait();
      return fileApplier.remove(key, c);
    },
  };
  const deps: ConvergeDeps = {
    state,
    appliers: { file: held as Applier<FileResource> },
    ctx: rig.ctx,
    adopter: createAdopter(),
    now: () => new Date('2026-12-01T00:00:00Z'),
    nodeName: () => 'model',
  };
  return { deps, ...holds, pass: null, results: null, memo: new PassMemo() };
}

/** Starts a pass of `host` over `declared`; it runs until it ends or reaches a hold. */
function startPass(host: Host, declared: FileResource[]): void {
  host.results = null;
  host.memo = new PassMemo();
  host.pass = converge(declared, { removeUndeclared: true }, { ...host.deps, ctx: { ...host.deps.ctx, pass: host.memo } });
}

/** Waits for the pass to end or to reach `hold`, whichever comes first. */
async function reached(host: Host, hold: Hold): Promise<void> {
  await Promise.race([host.pass, hold.whenAsked()]);
}

async function finished(host: Host): Promise<Map<string, ResourceResult>> {
  const results = await host.pass!;
  host.results = new Map(results.map((result) => [result.key, result]));
  return host.results;
}

/** The first host stops for good inside the undoing it reached; a new one starts on the store it left. */
async function killAndRestart(rig: Rig): Promise<void> {
  const { state } = await rig.store.load();
  rig.host = startHost(rig, new StateHandle(rig.store, state));
}

/** The conflict a state value is in (`{ conflict: 'kept' }`), if it is one. */
function conflictOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && 'conflict' in value ? String((value as { conflict: unknown }).conflict) : undefined;
}

function kindOf(observation: AdoptionObservation): 'matches' | 'conflicts' | 'unreadable' {
  if (observation.unreadable !== undefined) return 'unreadable';
  return observation.differences.length === 0 ? 'matches' : 'conflicts';
}

async function leadOutside(rig: Rig): Promise<void> {
  const outside = join(rig.scratch, 'elsewhere');
  await rename(join(rig.root, 'srv/app'), outside);
  await symlink(outside, join(rig.root, 'srv/app'));
}

const originalsDir = (rig: Rig) => adoptionInputFor(resource, rig.ctx).originalsDir;
const copyOf = (rig: Rig) => join(originalsDir(rig), PATH);

async function blockOriginals(rig: Rig): Promise<void> {
  await mkdir(dirname(originalsDir(rig)), { recursive: true });
  await writeFile(originalsDir(rig), 'in the way\n');
}

/** A directory of someone's where a file was: the host must leave it as it is. */
async function directoryInPlace(rig: Rig): Promise<void> {
  await rm(join(rig.root, PATH));
  await mkdir(join(rig.root, PATH));
  await writeFile(join(rig.root, PATH, 'notes'), 'someone else\'s\n');
}

/** Everything under the originals folder: what adoption has kept so far. */
async function keptEntries(rig: Rig): Promise<string[]> {
  return readdir(join(rig.ctx.stateDir, ORIGINALS_DIR), { recursive: true }).catch(() => []);
}

async function machineText(rig: Rig): Promise<string | null> {
  return readFile(join(rig.root, PATH), 'utf8').catch(() => null);
}

function line(rig: Rig): BriefingLine | undefined {
  return lineOf(rig.host.deps.state.current().briefing, KEY);
}

/** Whether the store says the host holds the key: owned, marked as being applied or undone, or neither. */
function held(rig: Rig): 'owned' | 'marked' | 'no' {
  const state = rig.host.deps.state.current();
  if (state.owned.resources.some((entry) => entry.key === KEY)) return 'owned';
  return state.applying.includes(KEY) ? 'marked' : 'no';
}

/** The store on disk says what the running host's memory says (every change is written through). */
async function expectStoreWritten(rig: Rig): Promise<void> {
  const { state } = await rig.store.load();
  const memory = rig.host.deps.state.current();
  expect({ owned: state.owned.resources, applying: state.applying, briefing: state.briefing })
    .toEqual({ owned: memory.owned.resources, applying: memory.applying, briefing: memory.briefing });
}

function resultOf(rig: Rig): ResourceResult | undefined {
  return rig.host.results?.get(KEY);
}

/** The real adoption decision agrees with the model's, and the machine's file is as it was arranged. */
async function expectDecided(rig: Rig, context: AdoptionContext): Promise<BriefingLine> {
  const real = line(rig);
  expect(real?.status).toBe(context.decision?.line.status);
  expect(real?.subject).toBe(KEY);
  expect(await machineText(rig)).toBe(rig.arranged);
  await expectStoreWritten(rig);
  return real!;
}

/** The real release agrees with the model's output. */
async function expectReleased(rig: Rig, output: AdoptionOutput | undefined): Promise<ResourceResult> {
  if (output === undefined || !isReleaseOutcome(output)) throw new Error(`the model did not release: ${JSON.stringify(output)}`);
  const result = resultOf(rig);
  expect(result?.outcome).toBe(output.outcome);
  await expectStoreWritten(rig);
  return result!;
}

async function ownerAndMode(rig: Rig): Promise<{ uid: number; mode: number }> {
  const stats = await stat(join(rig.root, PATH));
  return { uid: stats.uid, mode: stats.mode & 0o7777 };
}

describeModel({
  machine: adoptionMachine,
  input: modelInput,
  async setup(): Promise<Rig> {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-model-root-')));
    const scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-model-scratch-')));
    const ctx: ApplyContext = { root, stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
    const store = new HostStore(ctx.stateDir);
    const rig = { root, scratch, ctx, store, arranged: null, original: null };
    return { ...rig, host: startHost(rig, new StateHandle(store, emptyHostState())) };
  },
  async teardown(rig) {
    // Only the running host is let go; a host stopped by a kill stays stopped.
    for (const hold of [rig.host.keep, rig.host.handBack, rig.host.remove]) hold.open();
    await rig.host.pass?.catch(() => undefined);
    await rm(rig.root, { recursive: true, force: true });
    await rm(rig.scratch, { recursive: true, force: true });
  },
  events: {
    'resource.observed': {
      samples: {
        matches: { type: 'resource.observed', observation: { present: true, differences: [] } },
        conflicts: { type: 'resource.observed', observation: { present: true, differences: ['content differs (29 bytes, declared 10)'] } },
        unreadable: {
          type: 'resource.observed',
          observation: { present: false, differences: ['/srv/app/app.conf leads outside the root'], unreadable: '/srv/app/app.conf leads outside the root' },
        },
      },
      async drive(rig, event) {
        const kind = kindOf(event.observation);
        rig.arranged = kind === 'matches' ? DECLARED : BY_HAND;
        rig.original = rig.arranged;
        await mkdir(join(rig.root, 'srv/app'), { recursive: true });
        await writeFile(join(rig.root, PATH), rig.arranged);
        await chmod(join(rig.root, PATH), MODE);
        await chown(join(rig.root, PATH), THEIRS, THEIRS);
        if (kind === 'unreadable') await leadOutside(rig);
        expect(kindOf(await fileApplier.observe(resource, rig.ctx))).toBe(kind);
        startPass(rig.host, [resource]);
        await reached(rig.host, rig.host.keep);
        if (kind === 'unreadable') await finished(rig.host);
      },
    },
    'xstate.done.actor.keepOriginal': {
      samples: [doneEvent('keepOriginal', { at: `${modelInput.originalsDir}${PATH}` })],
      async drive(rig) {
        rig.host.keep.open();
        await finished(rig.host);
      },
    },
    'xstate.error.actor.keepOriginal': {
      samples: {
        'machine unreadable': errorEvent('keepOriginal', new MachineUnreadable(KEY, '/srv/app leads outside the root')),
        'copy failed': errorEvent('keepOriginal', new OriginalNotKept(modelInput.originalsDir, 'ENOTDIR: not a directory')),
      },
      async drive(rig, event: { error: unknown }) {
        if (couldNotRead(event.error)) {
          await leadOutside(rig);
          // A pass trusts the directories it resolved once (PassMemo), so a folder swapped for a
          // link after the host looked is seen only by a look of its own: forgetting them here
          // stands for that look.
          rig.host.memo.directories.clear();
        } else {
          await blockOriginals(rig);
        }
        rig.host.keep.open();
        await finished(rig.host);
      },
    },
    'resource.released': {
      samples: {
        undeclared: { type: 'resource.released', resuming: false },
        'after a kill': { type: 'resource.released', resuming: true },
      },
      async drive(rig, event, step) {
        if (conflictOf(step.from.value) !== undefined) {
          // The host wrote nothing and holds nothing: a pass without it lets the conflict go.
          if (event.resuming) await killAndRestart(rig);
          startPass(rig.host, []);
          await finished(rig.host);
          return;
        }
        const taken = step.from.value === 'taken';
        // From taken, the declaration changes first: the host writes over what it adopted. From
        // looking, nothing is there and the host makes the file itself. What it made once a
        // conflict was resolved is there already.
        if (step.from.value !== 'made') {
          startPass(rig.host, [taken ? rewritten : resource]);
          expect((await finished(rig.host)).get(KEY)?.outcome).toBe('applied');
        }
        const hold = (host: Host) => (taken ? host.handBack : host.remove);
        startPass(rig.host, []);
        await reached(rig.host, hold(rig.host));
        if (event.resuming) {
          await killAndRestart(rig);
          startPass(rig.host, []);
          await reached(rig.host, hold(rig.host));
        }
      },
    },
    'resource.applied': {
      samples: [{ type: 'resource.applied' }],
      async drive(rig, _event, step) {
        // A person clears the way and removes the machine's value, so the declaration can win.
        const conflict = conflictOf(step.from.value);
        if (conflict === 'unknown') {
          await rm(join(rig.root, 'srv/app'));
          await rename(join(rig.scratch, 'elsewhere'), join(rig.root, 'srv/app'));
        }
        if (conflict === 'failed') await rm(originalsDir(rig));
        await rm(join(rig.root, PATH));
        rig.arranged = DECLARED;
        startPass(rig.host, [resource]);
        expect((await finished(rig.host)).get(KEY)?.outcome).toBe('applied');
      },
    },
    'xstate.done.actor.handBack': {
      samples: {
        'put back': doneEvent('handBack', { outcome: 'handed_back', what: 'content, mode 0640, owner 1234:1234' }),
        'nothing kept': doneEvent('handBack', null),
        'not the original': doneEvent('handBack', { outcome: 'forgotten', what: `left ${PATH} in place: a directory is there now` }),
      },
      async drive(rig, event: { output: unknown }, step) {
        if (event.output === null) {
          // After a kill: the first host had put the original back and deleted its copy. Else
          // the copy was lost from the state directory while the host held the file.
          if (step.from.context.resuming) await fileApplier.handBack!(KEY, rig.ctx, originalsDir(rig));
          else await rm(copyOf(rig));
        } else if ((event.output as { outcome: string }).outcome !== 'handed_back') {
          await directoryInPlace(rig);
        }
        rig.host.handBack.open();
        await finished(rig.host);
      },
    },
    'xstate.error.actor.handBack': {
      samples: { 'record unreadable': errorEvent('handBack', new Error('the record of the kept original is unreadable')) },
      async drive(rig) {
        await writeFile(`${copyOf(rig)}.meta.json`, '{"mode": "all of them"');
        rig.host.handBack.open();
        await finished(rig.host);
      },
    },
    'xstate.done.actor.remove': {
      samples: [doneEvent('remove', 'removed')],
      async drive(rig) {
        rig.host.remove.open();
        await finished(rig.host);
      },
    },
    'xstate.error.actor.remove': {
      samples: [errorEvent('remove', new Error('left /srv/app/app.conf in place: a directory is there now'))],
      async drive(rig) {
        await directoryInPlace(rig);
        rig.host.remove.open();
        await finished(rig.host);
      },
    },
  },
  states: {
    async looking(rig) {
      expect(rig.host.pass).toBeNull();
      expect(await machineText(rig)).toBeNull();
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(await keptEntries(rig)).toEqual([]);
    },
    async keepingOriginal(rig) {
      // The real host has asked the applier to keep the original, and nothing is kept, written
      // or recorded until it is let go.
      expect(rig.host.keep.asked).toBe(1);
      expect(await keptEntries(rig)).toEqual([]);
      expect(await machineText(rig)).toBe(rig.arranged);
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(held(rig)).toBe('no');
    },
    async taken(rig, snapshot) {
      const decided = await expectDecided(rig, snapshot.context);
      if (decided.detail.startsWith('resolved')) {
        // A conflict resolved: the host applied the declaration, and holds it as adopted.
        expect(resultOf(rig)).toMatchObject({ outcome: 'applied' });
        expect(decided.detail).toMatch(/^resolved \(was kept\): the machine's value was no longer there, so the declaration was applied; adopted/);
      } else {
        expect(resultOf(rig)).toMatchObject({ outcome: 'unchanged', detail: expect.stringMatching(/^adopted: /) });
      }
      expect(held(rig)).toBe('owned');
      expect(rig.host.deps.state.current().owned.resources[0]).toMatchObject({ adopted: true, original_kept_at: decided.original_kept_at });
      expect(await readFile(decided.original_kept_at!, 'utf8')).toBe(rig.original);
    },
    async made(rig, snapshot) {
      const decided = await expectDecided(rig, snapshot.context);
      expect(resultOf(rig)).toMatchObject({ outcome: 'applied' });
      expect(decided.detail).toMatch(/^resolved \(was (unknown|failed)\): nothing of the machine's was there any more, so the host made it as declared; nothing was kept$/);
      expect(decided).not.toHaveProperty('original_kept_at');
      expect(held(rig)).toBe('owned');
      expect(rig.host.deps.state.current().owned.resources[0]).not.toHaveProperty('adopted');
      expect(await keptEntries(rig)).toEqual([]);
    },
    async dropped(rig) {
      // Nothing reported, nothing held, no line, no copy; the machine's file as it was.
      expect(resultOf(rig)).toBeUndefined();
      expect(held(rig)).toBe('no');
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(await readFile(copyOf(rig), 'utf8').catch(() => null)).toBeNull();
      expect(await machineText(rig)).toBe(rig.arranged);
      await expectStoreWritten(rig);
    },
    async 'conflict.kept'(rig, snapshot) {
      const decided = await expectDecided(rig, snapshot.context);
      expect(decided.detail).toMatch(/^content differs .* the machine's value wins, nothing was written; original kept at /);
      expect(held(rig)).toBe('no');
      expect(await readFile(decided.original_kept_at!, 'utf8')).toBe(BY_HAND);
    },
    async 'conflict.unknown'(rig, snapshot) {
      const decided = await expectDecided(rig, snapshot.context);
      expect(decided.detail).toMatch(/could not be read.*leads outside the root/);
      expect(decided).not.toHaveProperty('original_kept_at');
      expect(held(rig)).toBe('no');
      expect(await keptEntries(rig)).toEqual([]);
    },
    async 'conflict.failed'(rig, snapshot) {
      const decided = await expectDecided(rig, snapshot.context);
      expect(decided.detail).toMatch(/^the original could not be kept, so nothing was written: /);
      expect(decided).not.toHaveProperty('original_kept_at');
      expect(held(rig)).toBe('no');
      // The only thing in the originals folder is what was put in the way; no copy was made.
      expect(await readFile(originalsDir(rig), 'utf8')).toBe('in the way\n');
    },
    async handingBack(rig) {
      // The store says the host is undoing it before the machine is touched: marked, no longer
      // owned, its line (where the original is) still there, the host's last write in place.
      expect(rig.host.handBack.asked).toBe(1);
      expect(held(rig)).toBe('marked');
      expect(line(rig)).toMatchObject({ status: 'ok', original_kept_at: expect.any(String) });
      expect(await machineText(rig)).toBe(REWRITTEN);
      expect(await readFile(copyOf(rig), 'utf8')).toBe(rig.original);
      await expectStoreWritten(rig);
    },
    async removing(rig, snapshot) {
      expect(rig.host.remove.asked).toBe(1);
      expect(held(rig)).toBe('marked');
      // What the host made once a conflict was resolved keeps its line until it is removed.
      if (snapshot.context.decision === null) expect(line(rig)).toBeUndefined();
      else expect(line(rig)).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^resolved /) });
      expect(await machineText(rig)).toBe(DECLARED);
      expect(await keptEntries(rig)).toEqual([]);
      await expectStoreWritten(rig);
    },
    async handedBack(rig, snapshot) {
      const result = await expectReleased(rig, snapshot.output);
      expect(result.detail).toMatch(/^handed back the machine's original \(/);
      // The machine's own file, as it had it: content, mode and owner.
      expect(await machineText(rig)).toBe(rig.original);
      expect(await ownerAndMode(rig)).toEqual({ uid: THEIRS, mode: MODE });
      expect(held(rig)).toBe('no');
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(await keptEntries(rig)).toEqual([]);
    },
    async originalMissing(rig, snapshot) {
      const result = await expectReleased(rig, snapshot.output);
      expect(result.detail).toMatch(/^the machine's original kept at .* is no longer there, so nothing was put back: left as it is/);
      // Never claimed handed back, and what is there is left: nothing of it is deleted.
      expect(await machineText(rig)).toBe(REWRITTEN);
      expect(held(rig)).toBe('no');
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(await keptEntries(rig)).toEqual([]);
    },
    async notHandedBack(rig, snapshot) {
      const result = await expectReleased(rig, snapshot.output);
      expect(result.detail).toMatch(/^forgotten; left \/srv\/app\/app\.conf in place: a directory is there now/);
      expect(await readFile(join(rig.root, PATH, 'notes'), 'utf8')).toBe('someone else\'s\n');
      expect(held(rig)).toBe('no');
      // The line stays, saying so, and so does the copy it points to.
      expect(line(rig)).toMatchObject({ status: 'ok', detail: result.detail, original_kept_at: expect.any(String) });
      expect(await readFile(copyOf(rig), 'utf8')).toBe(rig.original);
    },
    async removed(rig, snapshot) {
      const result = await expectReleased(rig, snapshot.output);
      expect(result.detail).toBeUndefined();
      expect(await machineText(rig)).toBeNull();
      expect(held(rig)).toBe('no');
      expect(rig.host.deps.state.current().briefing).toBeNull();
      expect(await keptEntries(rig)).toEqual([]);
    },
    async stillHeld(rig, snapshot) {
      const result = await expectReleased(rig, snapshot.output);
      expect(result.detail).toMatch(/^could not (hand it back|remove it), so it is still owned: /);
      // Still the host's (owned again, or still marked after a kill), to be tried next pass.
      expect(held(rig)).not.toBe('no');
      if (snapshot.context.decision?.originalKeptAt === undefined) {
        // The host's own file, with a directory of someone's in its place: left as it is, and a
        // line (of a conflict resolved) still the one it had.
        if (snapshot.context.decision === null) expect(line(rig)).toBeUndefined();
        else expect(line(rig)).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^resolved /) });
        expect(await readFile(join(rig.root, PATH, 'notes'), 'utf8')).toBe('someone else\'s\n');
      } else {
        expect(line(rig)).toMatchObject({ status: 'ok', original_kept_at: expect.any(String) });
        expect(await machineText(rig)).toBe(REWRITTEN);
        expect(await readFile(copyOf(rig), 'utf8')).toBe(rig.original);
      }
    },
  },
});
