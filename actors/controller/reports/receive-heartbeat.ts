import { Heartbeat } from '../../../schema/heartbeat';
import type { ControllerContext } from '../controller-context';
import { recordLastSeen } from '../store/nodes.repo';

/**
 * Takes one heartbeat as it arrived on `mesh.node.<node>.heartbeat`: the node was heard from
 * now (the controller's clock, not the node's). One that does not match the contract or names
 * another node than its subject is ignored and logged. True when last seen was recorded.
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
  return recordLastSeen(ctx.store, node, ctx.now());
}
