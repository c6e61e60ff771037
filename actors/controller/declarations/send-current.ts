import type { ControllerContext } from '../controller-context';
import { getNodeDeclarationState, overlayMembers } from './declarations.repo';
import { nodeWorkQueue } from './node-work-queue';
import { sendDeclaration, type DeclarationSent } from './send-declaration';

/**
 * Sends the node the declaration it should hold now, by where it stands: the overlay until it
 * has reported one applied, the full declaration after. A node without an identity, or one
 * being released, is sent nothing (undefined). Call inside the node's work queue.
 */
export async function sendCurrent(ctx: ControllerContext, node: string): Promise<DeclarationSent | undefined> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state === undefined || (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected')) return undefined;
  if (state.release_generation !== null || state.overlay_address === null) return undefined;
  return sendDeclaration(ctx, node, state.overlay_applied_generation === null ? 'overlay' : 'full');
}

/**
 * The overlay changed (a node joined, came back with new keys, or left): every other node on
 * it is sent its current declaration again, with the new peers and names. Each node is queued
 * on its own; one that cannot be sent to is logged and the rest still go. Must not be awaited
 * from inside a node's work queue.
 */
export async function refreshPeers(ctx: ControllerContext, except: string): Promise<DeclarationSent[]> {
  const queue = nodeWorkQueue(ctx);
  const others = (await overlayMembers(ctx.store)).filter((member) => member.name !== except);
  const results = await Promise.allSettled(others.map((member) => queue.run(member.name, () => sendCurrent(ctx, member.name))));
  const sent: DeclarationSent[] = [];
  results.forEach((result, index) => {
    if (result.status === 'fulfilled') {
      if (result.value !== undefined) sent.push(result.value);
    } else {
      ctx.log(`could not send node ${others[index]?.name} its new peers: ${String(result.reason)}`, { level: 'error', node: others[index]?.name ?? null });
    }
  });
  return sent;
}
