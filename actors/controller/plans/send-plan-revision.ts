import type { PlanSend } from '../../../machines/plan.machine';
import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { getAssignment, latestSend, setAssignment } from '../modules/modules.repo';
import { sendWithModules } from '../modules/send-with-modules';
import { tellFreshProviders } from '../provisions/provision-links';
import { isPassingSendFailure } from './send-failure';

/** The revision a plan rolls out: the module, its version, and its place in the module's order. */
export interface PlanRevision {
  module: string;
  version: string;
  seq: number;
}

/**
 * What became of sending one node a plan's revision. A failure is `passing` when the broker or
 * the store failed it (isPassingSendFailure): the plan runner tries it again after a wait.
 */
export type NodeSendOutcome = { sent: PlanSend } | { failed: string; passing?: boolean } | { skipped: string };

/**
 * Sends `node` the plan's revision: moves its assignment of the module to the revision and sends
 * its full declaration with modules. Nothing is sent twice: a node whose latest declaration
 * already carries the revision (sent before a controller stopped, or by a push) is answered
 * with that send — unless `resend` asks for it again (a person retried the plan at its first
 * machine, which must apply it and report anew). Skipped, saying why, is a node that no longer runs the module, runs a newer
 * revision, or is released or being released; failed, saying why, is one that cannot take it now
 * (its identity revoked, its overlay not applied yet) or whose send went wrong, and its
 * assignment is put back as it was.
 */
export async function sendPlanRevision(ctx: ControllerContext, revision: PlanRevision, node: string, options: { resend?: boolean } = {}): Promise<NodeSendOutcome> {
  const since = ctx.now();
  const outcome = await sendInQueue(ctx, revision, node, options);
  // A revision that began to consume a provision was issued its credential as it was composed:
  // its providers are sent their lists now, outside this node's queue.
  if ('sent' in outcome) await tellFreshProviders(ctx, node, since);
  return outcome;
}

function sendInQueue(ctx: ControllerContext, revision: PlanRevision, node: string, options: { resend?: boolean }): Promise<NodeSendOutcome> {
  return nodeWorkQueue(ctx).run(node, async (): Promise<NodeSendOutcome> => {
    const assignment = await getAssignment(ctx.store, node, revision.module);
    if (assignment === undefined) return { skipped: `it no longer runs module ${revision.module}` };
    if (assignment.seq > revision.seq) return { skipped: `it runs ${revision.module} ${assignment.version}, newer than ${revision.version}` };
    if (assignment.seq === revision.seq && options.resend !== true) {
      const latest = await latestSend(ctx.store, node);
      if (latest !== undefined && latest.modules?.modules[revision.module] === revision.version) {
        return { sent: { generation: latest.generation, digest: latest.digest, at: latest.sent_at.toISOString() } };
      }
    }
    await setAssignment(ctx.store, node, revision.module, revision.version, ctx.now());
    const putBack = (): Promise<void> => setAssignment(ctx.store, node, revision.module, assignment.version, ctx.now());
    try {
      const outcome = await sendWithModules(ctx, node);
      if ('held' in outcome) {
        await putBack();
        return outcome.held.lasting ? { skipped: outcome.held.reason } : { failed: outcome.held.reason };
      }
      return { sent: { generation: outcome.sent.generation, digest: outcome.sent.digest, at: outcome.sent.sent_at.toISOString() } };
    } catch (error) {
      await putBack().catch((undo: unknown) => ctx.log(`plans: could not put node ${node}'s ${revision.module} back to ${assignment.version}: ${String(undo)}`, { level: 'error', node, module: revision.module }));
      // A broker or store that did not answer is said so, for the plan to try again after a wait.
      return { failed: (error as Error)?.message ?? String(error), ...(isPassingSendFailure(error) ? { passing: true } : {}) };
    }
  });
}
