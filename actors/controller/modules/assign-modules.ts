import * as z from 'zod';
import { ModuleName } from '../../../schema/module';
import { NodeName } from '../../../schema/primitives';
import type { ControllerContext } from '../controller-context';
import { nodeState } from '../declarations/compose-overlay';
import { NodeBeingReleased, NodeNotEnrolled } from '../declarations/declaration-errors';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refuseShapesOfKind } from '../declarations/refuse-shapes-of-kind';
import { failedAdoptionLines } from './failed-adoption-lines';
import { ModuleNotFound, NodeNotEligible } from './module-errors';
import { assignmentsOf, newestRevision, newestRevisions, setAssignment, type ModuleRevision } from './modules.repo';
import { refuseCollisions } from './node-declarers';
import { sendWithModules, type SentWithModules } from './send-with-modules';
import { refuseUnsealable } from '../secrets/seal-for-node';
import { refuseSeatClaimsAtAssign } from '../seats/seat-claims';
import { sendOthersWhenSeatsMoved } from '../seats/send-for-seats';
import { providerNodesOf, refuseCredentialPathCollisions, refuseUnprovided, tellNodes, type NodeTold } from '../provisions/provision-links';

/** The arguments of `assign` and `unassign`: one node, one or more modules. */
export const AssignArgs = z.strictObject({ node: NodeName, modules: z.array(ModuleName).min(1, { error: 'name at least one module' }) });
/** See {@link AssignArgs}. */
export type AssignArgs = z.infer<typeof AssignArgs>;

/** What a change to a node's modules did: what changed on that node, and what was sent. */
export interface ModulesChanged {
  node: string;
  /** Modules put on (assign) or taken off (unassign), each at its version. */
  changed: Array<{ module: string; version: string }>;
  /** Modules named that needed no change (already run, for assign). */
  unchanged: Array<{ module: string; version: string }>;
  /** The full declaration sent, or null when it could not go now (`held` says why). */
  sent: SentWithModules | null;
  held: string | null;
  /** Provider nodes sent their list of accepted credentials anew (a consumer was put on); absent when none. */
  providers?: NodeTold[];
}

/**
 * Puts modules on a node (`mesh-control assign NODE MODULE…`), each at its newest revision, and
 * sends the node its full declaration with them. All or nothing: refused, with nothing recorded,
 * is an unknown module (ModuleNotFound), a node without an identity or being released, a node
 * whose last report's adoption briefing has a `failed` line (NodeNotEligible: it is a node, but
 * is given no work until that is resolved), and two parties declaring one path, package, unit or
 * container on the node (ModuleCollision, naming both and the key), and a module holding a seat
 * another node holds alone or needing one nobody holds (seats/seat-claims.ts). A module the node runs
 * already is left at its revision (a push or a plan moves it).
 */
export async function assignModules(ctx: ControllerContext, args: AssignArgs): Promise<ModulesChanged> {
  const { node } = args;
  const named = [...new Set(args.modules)];
  const state = await nodeState(ctx, node);
  if (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected') throw new NodeNotEnrolled(node, state.lifecycle_state);
  if (state.release_generation !== null) throw new NodeBeingReleased(node, state.release_generation);
  const revisions: ModuleRevision[] = [];
  for (const module of named) {
    const newest = await newestRevision(ctx.store, module);
    if (newest === undefined) throw new ModuleNotFound(module, (await newestRevisions(ctx.store)).map((revision) => revision.name));
    revisions.push(newest);
  }

  // Inside the node's queue, so its reports (and their briefings) and its sends are in one order.
  const result = await nodeWorkQueue(ctx).run(node, async (): Promise<ModulesChanged> => {
    const failed = await failedAdoptionLines(ctx.store, node);
    if (failed.length > 0) throw new NodeNotEligible(node, failed);
    const running = new Map((await assignmentsOf(ctx.store, node)).map((assignment) => [assignment.module, assignment.version]));
    const put = revisions.filter((revision) => !running.has(revision.name));
    const unchanged = revisions.filter((revision) => running.has(revision.name)).map((revision) => ({ module: revision.name, version: running.get(revision.name) ?? revision.version }));
    const changed = put.map((revision) => ({ module: revision.name, version: revision.version }));
    if (put.length === 0) return { node, changed, unchanged, sent: null, held: 'nothing changed' };
    refuseShapesOfKind(node, state.profile, put.flatMap((revision) => revision.resources), 'nothing was assigned');
    await refuseCollisions(ctx, node, { put }, 'nothing was assigned');
    await refuseUnsealable(ctx, node, put.map((revision) => ({ module: revision.name, resources: revision.resources })));
    await refuseSeatClaimsAtAssign(ctx, node, put);
    await refuseUnprovided(ctx, node, put);
    await refuseCredentialPathCollisions(ctx, node, put);
    const at = ctx.now();
    await ctx.store.transaction(async (tx) => {
      for (const revision of put) await setAssignment(tx, node, revision.name, revision.version, at);
    });
    const outcome = await sendWithModules(ctx, node);
    return 'sent' in outcome ? { node, changed, unchanged, sent: outcome.sent, held: null } : { node, changed, unchanged, sent: null, held: outcome.held.reason };
  });
  // A module holding a seat changes every other node's roster; sent after this node's queue is let go.
  await sendOthersWhenSeatsMoved(ctx, node, result.changed);
  // A consumer put on was issued credentials as it was composed: its providers accept them once
  // sent their lists, outside this node's queue (a provider's send waits on its own).
  const providers = result.changed.length === 0 ? [] : await providerNodesOf(ctx, node, result.changed.map((entry) => entry.module));
  return providers.length === 0 ? result : { ...result, providers: await tellNodes(ctx, providers) };
}
