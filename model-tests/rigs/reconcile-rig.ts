import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, SimulatedClock } from 'xstate';
import type { Actor } from 'xstate';
import { DRIFT_INTERVAL_MS } from '../../machines/reconcile.machine';
import { Declaration } from '../../schema/declaration';
import type { Envelope } from '../../schema/envelope';
import type { HostPins, LastDeclaration } from '../../schema/host-state';
import { DirectoryResource, FileResource, resourceKey, type Resource } from '../../schema/resource';
import { createAdopter } from '../../actors/host/adoption/adoption.actor';
import { applierFor } from '../../actors/host/reconcile/applier-set';
import { directoryApplier } from '../../actors/host/appliers/directory.applier';
import { fileApplier } from '../../actors/host/appliers/file.applier';
import { applyContextOf, openHost, type HostContext } from '../../actors/host/host-context';
import { desiredResources } from '../../actors/host/reconcile/desired-resources';
import { reconcilePass, type PassReport } from '../../actors/host/reconcile/reconcile-pass';
import { reconcileLogic } from '../../actors/host/reconcile/reconcile.actor';
import { decodeBase64, encodeBase64 } from '../../actors/shared/crypto/base64';
import { envelopeDigest, sealEnvelope } from '../../actors/shared/crypto/envelope';
import { generateSigningKeyPair, type SigningKeyPair } from '../../actors/shared/crypto/keys';
import { ready } from '../../actors/shared/crypto/sodium';
import { ProcessRunner } from '../../actors/shared/process/command-runner';
import { PassHold, type HeldPass } from './pass-hold';

/** The drift period the rig's reconcile actor is given: the host's own default. */
export const RIG_DRIFT_MS = DRIFT_INTERVAL_MS;

/** The node the rig's declarations are signed for. */
export const RIG_NODE = 'workstation';

/** The declared file whose content changes with every declaration, and which a person edits by hand. */
export const MOTD = '/etc/motd';

/** What a person writes over the managed file. */
export const BY_HAND = 'edited by hand, not by the mesh\n';

// Applied by hand (`nox-mesh-host apply`) before the host started: a directory and a file in it,
// and a file the machine already had exactly as declared, which the first pass adopts.
const APP_DIR = DirectoryResource.parse({ shape: 'directory', path: '/srv/app' });
const APP_CONF = FileResource.parse({ shape: 'file', path: '/srv/app/app.conf', content: { text: 'listen 80\n' } });
const TIMEZONE = FileResource.parse({ shape: 'file', path: '/etc/timezone', content: { text: 'Etc/UTC\n' } });
const LOCAL_RESOURCES: Resource[] = [APP_DIR, APP_CONF, TIMEZONE];

/** Every path the rig's resources name, for looking at the machine. */
const PATHS = [MOTD, APP_DIR.path, APP_CONF.path, TIMEZONE.path];

const START = Date.parse('2026-03-02T09:00:00.000Z');

/** What the machine and the store hold, as far as reconcile is concerned. */
export interface MachineView {
  /** Each resource path: a file's text, `(directory)`, or null when nothing is there. */
  files: Record<string, string | null>;
  /** Keys the store records as owned, sorted. */
  owned: string[];
}

/** The machine view plus the store file's bytes: everything a pass could write. */
export interface FullView extends MachineView {
  store: string;
}

/**
 * A real host in a temporary root for the reconcile machine's model tests: the real store in a
 * temporary state directory, the real file and directory appliers and adopter, a declaration
 * signed by a controller key the store pins, and the real reconcile actor on a simulated clock,
 * its real pass (`reconcilePass`) behind a {@link PassHold}.
 *
 * What the rig does to the system is what happens to a host: a new signed declaration is
 * stored, the stored one is damaged so it no longer verifies, a person edits a managed file.
 */
export class ReconcileRig {
  /** Reports the actor's `onPass` heard, in order. */
  readonly heard: PassReport[] = [];
  /** The reconcile actor under test, on the rig's clock, its passes behind the hold. */
  readonly actor: Actor<ReturnType<typeof reconcileLogic>>;
  private generation = 0;
  private good: LastDeclaration | null = null;

  private constructor(
    /** The temporary directory holding the root and the state directory. */
    readonly scratch: string,
    readonly host: HostContext,
    readonly clock: SimulatedClock,
    readonly hold: PassHold,
    private readonly controller: SigningKeyPair,
  ) {
    const logic = reconcileLogic({ pass: hold.pass, onPass: (report) => this.heard.push(report), driftIntervalMs: RIG_DRIFT_MS });
    this.actor = createActor(logic, { clock });
  }

  /**
   * A host whose store holds a signed declaration and resources applied by hand, on a machine
   * that already has one of them, with its reconcile actor started (idle, nothing applied yet).
   */
  static async create(): Promise<ReconcileRig> {
    await ready();
    const scratch = await realpath(await mkdtemp(join(tmpdir(), 'mesh-reconcile-model-')));
    let host: HostContext | undefined;
    try {
      const root = join(scratch, 'root');
      await mkdir(join(root, 'etc'), { recursive: true });
      await writeFile(join(root, TIMEZONE.path), textOf(TIMEZONE));
      const clock = new SimulatedClock();
      clock.set(START);
      const opened = await openHost(
        { root, stateDir: join(scratch, 'state'), hostUnit: 'nox-mesh-host.service' },
        { runner: new ProcessRunner(), appliers: { file: fileApplier, directory: directoryApplier }, adopter: createAdopter(), now: () => new Date(clock.now()) },
      );
      host = opened;
      const controller = generateSigningKeyPair();
      const rig = new ReconcileRig(scratch, opened, clock, new PassHold((reasons, signal) => reconcilePass(opened, reasons, signal)), controller);
      const pins: HostPins = {
        broker_url: 'tls://broker.example:4222',
        broker_fingerprint: '5'.repeat(64),
        controller_public_key: controller.public_key,
      };
      await opened.state.update((state) => ({ ...state, pins, local_resources: LOCAL_RESOURCES }));
      await rig.declare();
      rig.actor.start();
      return rig;
    } catch (error) {
      await host?.close();
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
  }

  /** The text the declaration of `generation` gives the managed file. */
  static motdOf(generation: number): string {
    return `welcome to ${RIG_NODE}, declaration ${generation}\n`;
  }

  /** Signs the next generation of the declaration and stores it, as the link does when one arrives. */
  async declare(): Promise<void> {
    this.generation += 1;
    const declaration = Declaration.parse({
      node: RIG_NODE,
      epoch: 1,
      generation: this.generation,
      kind: 'full',
      issued_at: new Date(this.clock.now()).toISOString(),
      resources: [{ shape: 'file', path: MOTD, content: { text: ReconcileRig.motdOf(this.generation) } }],
    });
    const envelope = sealEnvelope(declaration, this.controller.secret_key);
    const stored: LastDeclaration = { envelope, applied_generation: this.generation, digest: envelopeDigest(envelope) };
    this.good = stored;
    await this.host.state.update((state) => ({ ...state, last_declaration: stored }));
  }

  /** Alters the stored declaration's signed bytes, as a hand edit of state.json would: it no longer verifies. */
  async damageDeclaration(): Promise<void> {
    const good = this.good;
    if (good === null) throw new Error('no declaration stored yet');
    const envelope = good.envelope as Envelope;
    const text = new TextDecoder().decode(decodeBase64(envelope.payload));
    const altered = text.replace(`declaration ${this.generation}`, `declaration ${this.generation + 100}`);
    if (altered === text) throw new Error('the stored declaration does not name its generation where expected');
    const damaged = { ...good, envelope: { ...envelope, payload: encodeBase64(new TextEncoder().encode(altered)) } };
    await this.host.state.update((state) => ({ ...state, last_declaration: damaged }));
  }

  /** Puts the last good declaration back (a person restoring the store from a backup). */
  async repairDeclaration(): Promise<void> {
    const good = this.good;
    await this.host.state.update((state) => ({ ...state, last_declaration: good }));
  }

  /**
   * A person edits the managed file, when the host has written it: returns whether it did.
   * Before the host owns it, an edit would be the machine's own file, adopted rather than put back.
   */
  async editByHand(): Promise<boolean> {
    if (!this.ownedKeys().includes(`file:${MOTD}`)) return false;
    await writeFile(this.real(MOTD), BY_HAND);
    return true;
  }

  /** The one pass the hold has: a test that expects a pass under way fails loudly without one. */
  heldPass(): HeldPass {
    const waiting = this.hold.waiting();
    if (waiting.length !== 1) throw new Error(`expected exactly one pass held, found ${waiting.length}`);
    return waiting[0];
  }

  /**
   * The machine once a pass has finished: the latest declaration's file and everything applied
   * by hand, each owned. Spelled out rather than read from the store, so a pass that lost the
   * hand-applied resources, or applied an older declaration, does not match it.
   */
  convergedView(): MachineView {
    return {
      files: { [MOTD]: ReconcileRig.motdOf(this.generation), [APP_DIR.path]: '(directory)', [APP_CONF.path]: textOf(APP_CONF), [TIMEZONE.path]: textOf(TIMEZONE) },
      owned: [`file:${MOTD}`, ...LOCAL_RESOURCES.map(resourceKey)].sort(),
    };
  }

  /** What the store says the machine should hold now (verifying the declaration, as a pass does). */
  desired(): Resource[] {
    return desiredResources(this.host.state.current());
  }

  /** Keys the store records as owned, sorted. */
  ownedKeys(): string[] {
    return this.host.state.current().owned.resources.map((owned) => owned.key).sort();
  }

  /** How the machine differs from what the store says it should hold, read by the real appliers. */
  async differences(): Promise<string[]> {
    const ctx = applyContextOf(this.host);
    const found: string[] = [];
    for (const resource of this.desired()) {
      const applier = applierFor(this.host.appliers, resource.shape);
      if (applier === undefined) throw new Error(`the rig has no ${resource.shape} applier`);
      const observation = await applier.observe(resource, ctx);
      for (const difference of observation.differences) found.push(`${resourceKey(resource)}: ${difference}`);
    }
    return found;
  }

  /** The resource paths on the machine and what the store owns. */
  async view(): Promise<MachineView> {
    const files: Record<string, string | null> = {};
    for (const path of PATHS) files[path] = await this.look(path);
    return { files, owned: this.ownedKeys() };
  }

  /** {@link view} plus the store file itself. */
  async fullView(): Promise<FullView> {
    return { ...(await this.view()), store: await readFile(this.host.store.file, 'utf8') };
  }

  /** The managed file's text, or null. */
  motd(): Promise<string | null> {
    return this.look(MOTD);
  }

  /** Lets every pass go, stops the actor, closes the host and removes the temporary directory. */
  async dispose(): Promise<void> {
    this.actor.stop();
    await this.hold.releaseAll();
    await this.host.close();
    await rm(this.scratch, { recursive: true, force: true });
  }

  private real(path: string): string {
    return join(this.host.settings.root, path);
  }

  private async look(path: string): Promise<string | null> {
    const real = this.real(path);
    const found = await stat(real).catch(() => undefined);
    if (found === undefined) return null;
    return found.isDirectory() ? '(directory)' : readFile(real, 'utf8');
  }
}

function textOf(resource: FileResource): string {
  if ('text' in resource.content) return resource.content.text;
  // The rig declares no secrets; a sealed content reads as nothing here.
  return 'base64' in resource.content ? Buffer.from(resource.content.base64, 'base64').toString('utf8') : '';
}
