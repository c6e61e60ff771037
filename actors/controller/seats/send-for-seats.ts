import type { ControllerContext } from '../controller-context';
import { overlayMembers } from '../declarations/declarations.repo';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { sendWithModules } from '../modules/send-with-modules';
import { seatClaimsOf } from './seats.repo';

/**
 * After modules were put on or taken off `node`: when one of them holds a seat, every other
 * node on the overlay is sent its declaration again, since its roster fact (and, for the
 * resolver, its resolv.conf) names the seat's holders. Call it outside `node`'s work queue:
 * each send takes its own node's. Returns the nodes sent to.
 */
export async function sendOthersWhenSeatsMoved(ctx: ControllerContext, node: string, modules: ReadonlyArray<{ module: string; version: string }>): Promise<string[]> {
  const claims = await Promise.all(modules.map((entry) => seatClaimsOf(ctx.store, entry.module, entry.version)));
  if (claims.every((claim) => claim.holds.length === 0)) return [];
  const sent: string[] = [];
  for (const member of await overlayMembers(ctx.store)) {
    if (member.name === node) continue;
    const outcome = await nodeWorkQueue(ctx).run(member.name, () => sendWithModules(ctx, member.name));
    if ('sent' in outcome) sent.push(member.name);
  }
  return sent;
}
