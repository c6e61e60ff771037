import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SimulatedClock } from 'xstate';
import type { UpgradePolicy } from '../../../../schema/module';
import { setDeclaredResources } from '../../declarations/declarations.repo';
import { addModule, type ModuleAdded } from '../../modules/add-module';
import { assignModules } from '../../modules/assign-modules';
import { pushNodes } from '../../modules/push-nodes';
import { serveController, type ServingController } from '../../serve/serve-controller';
import { PlanBook, type PlanBookOptions } from '../plan-book';
import type { PlanRunner } from '../plan-runner';
import { getPlan, openPlans, type PlanRow } from '../plans.repo';
import { partsWithPlans } from './parts-with-plans';
import { RolloutMesh, textFile } from './rollout-mesh';
import { SendHold } from './send-hold';

/** The module every path of the plan model rolls out. */
export const MODEL_MODULE = 'm';
/** The file its revisions write, saying their version. */
export const MODEL_FILE = '/srv/m/version';
/** The first machine's wait, on the simulated clock. */
export const MODEL_WAIT_MS = 60_000;

/**
 * The world the plan machine's paths run in: three real machines (a, b, c) running
 * `nox-mesh-host`, the broker and PostgreSQL (RolloutMesh), and a controller served in this
 * process (serveController) whose plan book the paths drive directly. The book's waits run on a
 * simulated clock, every node send of every plan is held (SendHold) until a path lets it go, and
 * first machines' reports are judged only when a path asks (checkNow), so each step of a path can
 * be looked at before the next happens. Everything else is the real thing.
 */
export class PlanWorld {
  readonly mesh: RolloutMesh;
  readonly serving: ServingController;
  readonly clock = new SimulatedClock();
  readonly hold = new SendHold();
  book: PlanBook;
  /** The module's newest registered version (a whole number, as text). */
  version = 0;

  private constructor(mesh: RolloutMesh, serving: ServingController) {
    this.mesh = mesh;
    this.serving = serving;
    this.book = new PlanBook(serving.ctx, this.bookOptions());
  }

  /** Raises the world: the mesh, the controller, the book, and module m at version 1 on every machine. */
  static async start(log: (line: string) => void): Promise<PlanWorld> {
    let serving: ServingController | undefined;
    const mesh = await RolloutMesh.start(['a', 'b', 'c'], async (m) => {
      serving = await serveController(m.rig.meshDir, { parts: partsWithPlans(null), log });
    });
    if (serving === undefined) throw new Error('the controller did not start');
    const world = new PlanWorld(mesh, serving);
    await world.book.start();
    await world.addRevision('one-first');
    for (const node of world.nodes) await assignModules(serving.ctx, { node, modules: [MODEL_MODULE] });
    await world.machinesRead(world.nodes, world.version);
    return world;
  }

  /** The machines, by name. */
  get nodes(): readonly string[] {
    return this.mesh.rig.hosts;
  }

  /** The book's options: reports judged only on checkNow, waits on the simulated clock, sends held. */
  bookOptions(): PlanBookOptions {
    return { checkEveryMs: 0, firstReportWaitMs: MODEL_WAIT_MS, clock: this.clock, beforeSend: this.hold.beforeSend };
  }

  /** Stops the book and starts a new one on the same store: what a controller taking over does. */
  async restartBook(): Promise<void> {
    await this.book.stop();
    this.book = new PlanBook(this.serving.ctx, this.bookOptions());
    await this.book.start();
  }

  /** Registers the next version of the module under `policy` (module add). */
  async addRevision(policy: UpgradePolicy): Promise<ModuleAdded> {
    this.version += 1;
    const version = String(this.version);
    return addModule(this.serving.ctx, this.book, {
      module: { name: MODEL_MODULE, version, upgrade_policy: policy, resources: [textFile(MODEL_FILE, `${version}\n`)] },
    });
  }

  /** The plan as the store holds it. */
  async row(id: number): Promise<PlanRow> {
    const row = await getPlan(this.serving.ctx.store, id);
    if (row === undefined) throw new Error(`no plan ${id}`);
    return row;
  }

  /** The runner working plan `id`, while it is open. */
  runner(id: number): PlanRunner | undefined {
    return this.book.runner(id);
  }

  /** The version of the module each machine's declarations carry. */
  async pins(): Promise<Record<string, string>> {
    const rows = await this.serving.ctx.store.query<{ node: string; version: string }>('SELECT node, version FROM module_assignments WHERE module = $1', [MODEL_MODULE]);
    return Object.fromEntries(rows.map((row) => [row.node, row.version]));
  }

  /** Waits until the module's file on each of `nodes` says `version`. */
  machinesRead(nodes: readonly string[], version: number | string): Promise<void> {
    return this.mesh.filesRead(nodes, MODEL_FILE.slice(1), `${version}\n`);
  }

  /**
   * Makes the next composition of `node`'s declaration fail for real: `node declare` is recorded
   * (straight in the store, nothing sent) naming the module's file with other content, so the
   * declaration would hold one path twice and its contract refuses it.
   */
  async breakComposition(node: string): Promise<void> {
    await setDeclaredResources(this.serving.ctx.store, node, [textFile(MODEL_FILE, 'declared by hand\n')], this.serving.ctx.now());
  }

  /** Takes back what breakComposition recorded. */
  async repairComposition(node: string): Promise<void> {
    await setDeclaredResources(this.serving.ctx.store, node, [], this.serving.ctx.now());
  }

  /**
   * Makes machine `node` fail the module's file for real: a directory where the file goes, which
   * the host refuses to write over, then its host restarted, so its next pass reports the failure.
   */
  async failOnMachine(node: string): Promise<void> {
    const file = path.join(this.mesh.rig.hostRoot(node), MODEL_FILE);
    await fs.rm(file, { recursive: true, force: true });
    await fs.mkdir(file, { recursive: true });
    await this.mesh.rig.stopHost(node);
    await this.mesh.rig.startHost(node);
  }

  /** Takes the directory away again; the machine writes the file at its next declaration. */
  async repairMachine(node: string): Promise<void> {
    await fs.rm(path.join(this.mesh.rig.hostRoot(node), MODEL_FILE), { recursive: true, force: true });
  }

  /**
   * Leaves the world as a path expects to find it: no open plan (each closed), no send held, no
   * composition broken, and every machine sent and holding the module's newest version.
   */
  async settle(): Promise<void> {
    for (const row of await openPlans(this.serving.ctx.store)) await this.book.close(row.id).catch(() => undefined);
    for (const held of this.hold.all()) held.release();
    for (const node of this.nodes) {
      await this.repairComposition(node);
      await this.repairMachine(node);
    }
    await pushNodes(this.serving.ctx, this.book, {});
    await this.machinesRead(this.nodes, this.version);
  }

  /** Stops the book, the controller and the mesh. */
  async stop(): Promise<void> {
    await this.book.stop().catch(() => undefined);
    await this.serving.stop().catch(() => undefined);
    await this.mesh.stop();
  }
}
