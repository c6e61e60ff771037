import * as z from 'zod';
import { digestOf } from '../../../schema/canonical';
import { compareModuleVersions, ModuleManifest, type UpgradePolicy } from '../../../schema/module';
import type { ControllerContext } from '../controller-context';
import type { PlanBook } from '../plans/plan-book';
import type { PlanRow } from '../plans/plans.repo';
import { ModuleVersionNotNewer, ModuleVersionReused } from './module-errors';
import { assignmentsOf, assignmentsOfModule, insertRevision, newestRevision, type ModuleRevision } from './modules.repo';
import { refuseCollisions } from './node-declarers';
import { refuseSealedBoxes } from '../secrets/secret-file-rules';
import { refuseUnsetSecrets } from '../secrets/seal-for-node';
import { recordSeatClaims } from '../seats/seats.repo';
import { refuseSeatClaimsOfRevision } from '../seats/seat-claims';
import { recordRevisionProvisions } from '../provisions/provisions.repo';

/** The arguments of `module.add`: the module (module.json, parsed) and where it was read from. */
export const ModuleAddArgs = z.strictObject({ module: ModuleManifest, source: z.string().min(1).max(4096).optional() });
/** See {@link ModuleAddArgs}. */
export type ModuleAddArgs = z.infer<typeof ModuleAddArgs>;

/** What `module.add` did. */
export interface ModuleAdded {
  module: string;
  version: string;
  upgrade_policy: UpgradePolicy;
  /** False when this very revision was registered already: nothing changed. */
  added: boolean;
  /** The plan opened for the nodes running an older revision; null when none does. */
  plan: { id: number; state: string; first: string | null; targets: string[] } | null;
  /** Older open plans of the module this one superseded. */
  superseded: number[];
}

/**
 * Registers a module revision (`mesh-control module add PATH`). The first revision of a name
 * is simply registered; a later one must carry a higher version (ModuleVersionNotNewer), and the
 * same version again must be the same content (ModuleVersionReused; the same content is a no-op).
 *
 * A new revision of a module some nodes run opens a plan for the nodes behind, recorded with the
 * revision in one transaction, and supersedes the module's older open plans (the new plan holds
 * every node they had not sent). Refused first, naming both modules and the key, is a revision
 * that would collide with another module (or `node declare`, or the overlay) on a node that runs
 * it (ModuleCollision).
 */
export async function addModule(ctx: ControllerContext, book: PlanBook, args: ModuleAddArgs): Promise<ModuleAdded> {
  const manifest = args.module;
  refuseSealedBoxes(manifest.name, manifest.resources);
  const digest = digestOf(manifest);
  const newest = await newestRevision(ctx.store, manifest.name);
  const unchanged = { module: manifest.name, version: manifest.version, upgrade_policy: manifest.upgrade_policy, plan: null, superseded: [] };
  if (newest !== undefined) {
    const order = compareModuleVersions(manifest.version, newest.version);
    if (order < 0) throw new ModuleVersionNotNewer(manifest.name, manifest.version, newest.version);
    if (order === 0) {
      if (newest.digest !== digest) throw new ModuleVersionReused(manifest.name, newest.version);
      return { ...unchanged, version: newest.version, added: false };
    }
  }

  const running = (await assignmentsOfModule(ctx.store, manifest.name)).map((assignment) => assignment.node);
  const candidate: ModuleRevision = { ...manifest, seq: (newest?.seq ?? 0) + 1, digest, source: args.source ?? null, added_at: ctx.now() };
  const refused = `module ${manifest.name} ${manifest.version} was not registered`;
  for (const node of running) {
    // Against the other modules as the node runs them now, and as a push would move them.
    await refuseCollisions(ctx, node, { put: [candidate] }, refused);
    await refuseCollisions(ctx, node, { put: [candidate, ...(await newestOfOthers(ctx, node, manifest.name))] }, refused);
  }

  // Nodes already run it: a file naming a secret that is not set could not be sent to them.
  if (running.length > 0) await refuseUnsetSecrets(ctx, [{ module: manifest.name, resources: manifest.resources }]);
  await refuseSeatClaimsOfRevision(ctx, manifest.name, manifest.seats, running);
  const targets = await nodesRunning(ctx, manifest.name);
  const older = book.runners().filter((runner) => runner.revision.module === manifest.name).map((runner) => runner.id);
  const { revision, row } = await ctx.store.transaction(async (tx) => {
    const revision = await insertRevision(tx, { name: manifest.name, version: manifest.version, upgrade_policy: manifest.upgrade_policy, resources: manifest.resources, digest, source: args.source ?? null, added_at: ctx.now() });
    await recordSeatClaims(tx, revision.name, revision.version, manifest.seats);
    await recordRevisionProvisions(tx, manifest.name, manifest.version, manifest);
    const row: PlanRow | undefined =
      targets.length === 0 ? undefined : await book.record(tx, { module: revision.name, version: revision.version, seq: revision.seq, policy: revision.upgrade_policy }, targets);
    return { revision, row };
  });
  if (row === undefined) return { ...unchanged, added: true };
  const runner = await book.take(row);
  await runner.settled();
  const context = runner.context();
  return {
    module: revision.name,
    version: revision.version,
    upgrade_policy: revision.upgrade_policy,
    added: true,
    plan: { id: row.id, state: runner.state(), first: context.first, targets: context.targets },
    superseded: older,
  };
}

/** The newest revision of every other module `node` runs. */
async function newestOfOthers(ctx: ControllerContext, node: string, module: string): Promise<ModuleRevision[]> {
  const newest: ModuleRevision[] = [];
  for (const assignment of await assignmentsOf(ctx.store, node)) {
    if (assignment.module === module) continue;
    const revision = await newestRevision(ctx.store, assignment.module);
    if (revision !== undefined) newest.push(revision);
  }
  return newest;
}

/** The nodes holding an identity (enrolled or disconnected) that run `module` at all. */
async function nodesRunning(ctx: ControllerContext, module: string): Promise<string[]> {
  const rows = await ctx.store.query<{ node: string }>(
    `SELECT a.node FROM module_assignments a JOIN nodes n ON n.name = a.node
     WHERE a.module = $1 AND n.lifecycle_state IN ('enrolled', 'disconnected') ORDER BY a.node`,
    [module],
  );
  return rows.map((row) => row.node);
}
