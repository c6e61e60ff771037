/**
 * The adoption machine's paths, walked by the real adoption actor (adoptionLogic, with
 * keepOriginal wired through actors/host/adoption/keep-original.ts to the real file applier)
 * against real files in a temporary root and state directory.
 *
 * Each `resource.observed` sample is made true on disk before the real applier observes it:
 * the declared bytes for `matches`, a person's own bytes for `conflicts`, the file's folder
 * behind a link that leads outside the root for `unreadable`. The actor is then sent what the
 * applier really observed, as the reconcile engine does.
 *
 * The only thing the rig adds is a hold in front of the applier's keepOriginal, so a path can
 * look at the system while the original is being kept and before it is. Releasing the hold is
 * how `keepOriginal` ends: as it is, for done; after moving the file's folder behind a link
 * out of the root, for the read failure; after putting a plain file where the originals
 * folder goes, for the copy failure. The assertions read the real files and the actor's output.
 */
import { mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createActor, waitFor } from 'xstate';
import type { Actor } from 'xstate';
import { adoptionMachine, couldNotRead } from '../machines/adoption.machine';
import type { AdoptionObservation, AdoptionOutcome } from '../machines/adoption.machine';
import { FileResource } from '../schema/resource';
import { adoptionInputFor, adoptionLogic, type AdoptionLogic } from '../actors/host/adoption/adoption.actor';
import { MachineUnreadable, OriginalNotKept } from '../actors/host/adoption/keep-original-errors';
import { ORIGINALS_DIR } from '../actors/host/adoption/originals-dir';
import type { Applier, ApplyContext } from '../actors/host/appliers/applier';
import { fileApplier } from '../actors/host/appliers/file.applier';
import { ProcessRunner } from '../actors/shared/process/command-runner';
import { describeModel, doneEvent, errorEvent } from './harness';

const PATH = '/srv/app/app.conf';
const KEY = `file:${PATH}`;
const DECLARED = 'listen 80\n';
const BY_HAND = 'listen 8080 # chosen by hand\n';
const resource = FileResource.parse({ shape: 'file', path: PATH, content: { text: DECLARED } });
const modelInput = adoptionInputFor(resource, { stateDir: '/var/lib/mesh-host' });

/** Holds the applier's keepOriginal until a driver says how it is to end. */
class Hold {
  asked = 0;
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => { this.release = resolve; });

  wait(): Promise<void> {
    this.asked += 1;
    return this.released;
  }

  open(): void {
    this.release();
  }
}

interface Rig {
  root: string;
  scratch: string;
  ctx: ApplyContext;
  hold: Hold;
  actor: Actor<AdoptionLogic>;
  /** What the machine had at PATH once the last driver arranged it; null before. */
  arranged: string | null;
  /** What the real applier observed and the actor was sent. */
  observation: AdoptionObservation | null;
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

async function blockOriginals(rig: Rig): Promise<void> {
  const dir = adoptionInputFor(resource, rig.ctx).originalsDir;
  await mkdir(dirname(dir), { recursive: true });
  await writeFile(dir, 'in the way\n');
}

/** Everything under the originals folder: what adoption has kept so far. */
async function keptEntries(rig: Rig): Promise<string[]> {
  return readdir(join(rig.ctx.stateDir, ORIGINALS_DIR), { recursive: true }).catch(() => []);
}

async function machineText(rig: Rig): Promise<string | null> {
  return readFile(join(rig.root, PATH), 'utf8').catch(() => null);
}

async function finished(rig: Rig): Promise<AdoptionOutcome> {
  const snapshot = await waitFor(rig.actor, (s) => s.status === 'done', { timeout: 5000 });
  return snapshot.output!;
}

/** The real decision agrees with the model's, and the machine's file is as it was arranged. */
async function expectDecided(rig: Rig, modelOutput: AdoptionOutcome | undefined): Promise<AdoptionOutcome> {
  const real = rig.actor.getSnapshot().output!;
  expect(real.take).toBe(modelOutput?.take);
  expect(real.line.status).toBe(modelOutput?.line.status);
  expect(real.line.subject).toBe(KEY);
  expect(await machineText(rig)).toBe(rig.arranged);
  return real;
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describeModel({
  machine: adoptionMachine,
  input: modelInput,
  async setup(): Promise<Rig> {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-model-root-')));
    const scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-adoption-model-scratch-')));
    const ctx: ApplyContext = { root, stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
    const hold = new Hold();
    const held: Applier = {
      ...(fileApplier as Applier),
      async keepOriginal(r, c, dir) {
        await hold.wait();
        return fileApplier.keepOriginal(r as FileResource, c, dir);
      },
    };
    const actor = createActor(adoptionLogic({ applier: held, resource, ctx }), { input: adoptionInputFor(resource, ctx) });
    actor.start();
    return { root, scratch, ctx, hold, actor, arranged: null, observation: null };
  },
  async teardown(rig) {
    rig.hold.open();
    rig.actor.stop();
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
        await mkdir(join(rig.root, 'srv/app'), { recursive: true });
        await writeFile(join(rig.root, PATH), rig.arranged);
        if (kind === 'unreadable') await leadOutside(rig);
        const observation = await fileApplier.observe(resource, rig.ctx);
        expect(kindOf(observation)).toBe(kind);
        rig.observation = observation;
        rig.actor.send({ type: 'resource.observed', observation });
        await settle();
      },
    },
    'xstate.done.actor.keepOriginal': {
      samples: [doneEvent('keepOriginal', { at: `${modelInput.originalsDir}${PATH}` })],
      async drive(rig) {
        rig.hold.open();
        await finished(rig);
      },
    },
    'xstate.error.actor.keepOriginal': {
      samples: {
        'machine unreadable': errorEvent('keepOriginal', new MachineUnreadable(KEY, '/srv/app leads outside the root')),
        'copy failed': errorEvent('keepOriginal', new OriginalNotKept(modelInput.originalsDir, 'ENOTDIR: not a directory')),
      },
      async drive(rig, event: { error: unknown }) {
        if (couldNotRead(event.error)) await leadOutside(rig);
        else await blockOriginals(rig);
        rig.hold.open();
        await finished(rig);
      },
    },
  },
  states: {
    async looking(rig) {
      expect(rig.actor.getSnapshot().value).toBe('looking');
      expect(rig.hold.asked).toBe(0);
      expect(await keptEntries(rig)).toEqual([]);
    },
    async keepingOriginal(rig) {
      expect(rig.actor.getSnapshot().value).toBe('keepingOriginal');
      // The real actor has asked the applier to keep the original, and nothing is kept or
      // written until it is let go.
      expect(rig.hold.asked).toBe(1);
      expect(await keptEntries(rig)).toEqual([]);
      expect(await machineText(rig)).toBe(rig.arranged);
    },
    async taken(rig, snapshot) {
      const decision = await expectDecided(rig, snapshot.output);
      expect(decision.originalKeptAt).toBe(decision.line.original_kept_at);
      expect(await readFile(decision.originalKeptAt!, 'utf8')).toBe(rig.arranged);
    },
    async kept(rig, snapshot) {
      const decision = await expectDecided(rig, snapshot.output);
      for (const difference of rig.observation!.differences) expect(decision.line.detail).toContain(difference);
      expect(decision.line.detail).toContain(`original kept at ${decision.line.original_kept_at}`);
      expect(await readFile(decision.line.original_kept_at!, 'utf8')).toBe(BY_HAND);
    },
    async unknown(rig, snapshot) {
      const decision = await expectDecided(rig, snapshot.output);
      expect(decision.line.detail).toMatch(/could not be read.*leads outside the root/);
      expect(decision.line).not.toHaveProperty('original_kept_at');
      expect(await keptEntries(rig)).toEqual([]);
    },
    async failed(rig, snapshot) {
      const decision = await expectDecided(rig, snapshot.output);
      expect(decision.line.detail).toMatch(/^the original could not be kept, so nothing was written: /);
      expect(decision.line).not.toHaveProperty('original_kept_at');
      // The only thing in the originals folder is what was put in the way; no copy was made.
      expect(await readFile(adoptionInputFor(resource, rig.ctx).originalsDir, 'utf8')).toBe('in the way\n');
    },
  },
});
