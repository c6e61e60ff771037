import type { ControllerContext } from '../controller-context';
import { nodeState } from '../declarations/compose-overlay';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import type { AssignArgs, ModulesChanged } from './assign-modules';
import { ModuleNotAssigned } from './module-errors';
import { assignmentsOf, removeAssignment } from './modules.repo';
import { sendWithModules } from './send-with-modules';
import { refuseLosingNeededSeats } from '../seats/seat-claims';
import { sendOthersWhenSeatsMoved } from '../seats/send-for-seats';
import { forgetCredentialsOf, providerNodesOf, refuseLastProviderRemoval, tellNodes } from '../provisions/provision-links';

/**
 * Takes modules off a node (`mesh-control unassign NODE MODULE…`) and sends the node its full
 * declaration without them, so the node removes what they declared (files, directories and
 * containers removed, services stopped, packages and actions forgotten). All or nothing: a
 * module the node does not run is refused (ModuleNotAssigned), and so is taking off the last
 * holder of a seat another module still needs (SeatStillNeeded); nothing is taken off. An open
 * plan for a module taken off skips the node from then on.
 */
export async function unassignModules(ctx: ControllerContext, args: AssignArgs): Promise<ModulesChanged> {
  const { node } = args;
  const named = [...new Set(args.modules)];
  await nodeState(ctx, node);
  let providers: string[] = [];
  const result = await nodeWorkQueue(ctx).run(node, async (): Promise<ModulesChanged> => {
    const running = new Map((await assignmentsOf(ctx.store, node)).map((assignment) => [assignment.module, assignment.version]));
    const missing = named.find((module) => !running.has(module));
    if (missing !== undefined) throw new ModuleNotAssigned(node, missing, [...running.keys()]);
    await refuseLosingNeededSeats(ctx, node, named);
    await refuseLastProviderRemoval(ctx, node, named);
    providers = await providerNodesOf(ctx, node, named);
    await ctx.store.transaction(async (tx) => {
      for (const module of named) await removeAssignment(tx, node, module);
    });
    // Their credentials are withdrawn: each provider stops accepting them with its next list.
    await forgetCredentialsOf(ctx, node, named);
    const changed = named.map((module) => ({ module, version: running.get(module) ?? '' }));
    const outcome = await sendWithModules(ctx, node);
    return 'sent' in outcome ? { node, changed, unchanged: [], sent: outcome.sent, held: null } : { node, changed, unchanged: [], sent: null, held: outcome.held.reason };
  });
  // A module holding a seat changes every other node's roster; sent after this node's queue is let go.
  await sendOthersWhenSeatsMoved(ctx, node, result.changed);
  return providers.length === 0 ? result : { ...result, providers: await tellNodes(ctx, providers) };
}
