import { Heartbeat } from '../../../schema/heartbeat';
import type { ControllerContext } from '../controller-context';
import { busObjects } from '../declarations/bus-objects';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { recordHeartbeat } from './record-heartbeat';

/**
 * Takes one heartbeat as it arrived on `mesh.node.<node>.heartbeat`: the node was heard from
 * now (the controller's clock, not the node's). One that does not match the contract or names
 * another node than its subject is ignored and logged. True when last seen was recorded.
 *
 * A host that says it cannot hear its declarations (its consumer or the stream gone) has that
 * recorded for status, and the acting controller asserts the node's consumer at once rather
 * than at the next read-back: at most once per assertion's lifetime (BusObjects), however often
 * the node says it.
 */
export async function receiveHeartbeat(ctx: ControllerContext, subject: string, data: Uint8Array): Promise<boolean> {
  const node = subject.split('.')[2] ?? '';
  let heartbeat;
  try {
    heartbeat = Heartbeat.safeParse(JSON.parse(new TextDecoder().decode(data)));
  } catch {
    heartbeat = undefined;
  }
  if (heartbeat === undefined || !heartbeat.success || heartbeat.data.node !== node) {
    ctx.log(`reports: a heartbeat on ${subject} ignored: it is not a heartbeat of node ${node}`);
    return false;
  }
  const recorded = await recordHeartbeat(ctx.store, node, heartbeat.data, ctx.now());
  if (recorded && heartbeat.data.deaf !== undefined && ctx.lease?.isActing() !== false) {
    await nodeWorkQueue(ctx)
      .run(node, () => busObjects(ctx).assertForSend(node))
      .catch((error: unknown) => ctx.log(`reports: node ${node} cannot hear its declarations, and its consumer could not be asserted (the read-back tries again): ${error instanceof Error ? error.message : String(error)}`));
  }
  return recorded;
}
