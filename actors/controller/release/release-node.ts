import type { ControllerContext } from '../controller-context';
import { nodeState } from '../declarations/compose-overlay';
import { NodeNotEnrolled } from '../declarations/declaration-errors';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refreshPeers } from '../declarations/send-current';
import { sendDeclaration } from '../declarations/send-declaration';
import { completeRelease } from './complete-release';
import { SeatHolderLeaving } from '../seats/seat-errors';
import { seatsLostWith, type SeatWithoutHolder } from '../seats/seats-left-without-holder';

/** What `node.release` did. */
export interface ReleaseOutcome {
  node: string;
  /** The final declaration's generation; null when the node was released at once. */
  generation: number | null;
  /** True when the node is released already (it held no identity to send a final declaration to). */
  released: boolean;
  /** The seats this release leaves needed and held by no node on the mesh (only with --force). */
  seats_left_without_holder: SeatWithoutHolder[];
}

/**
 * Retires a node gracefully: sends it a final declaration naming nothing. The node removes what
 * it owns, reports, and drops its identity; the report receiver finishes the release when that
 * report says nothing failed (completeRelease). Asking again while a release is under way sends
 * the final declaration again.
 *
 * A revoked node (its identity revoked for a re-enrolment that never came) cannot be sent
 * anything, and holds nothing the mesh can reach: it is released at once.
 *
 * Refused (SeatHolderLeaving, naming each seat and what needs it) when the node is the last
 * holder on the mesh of a seat a module on another node still needs, unless `force`: then it
 * goes, the outcome names the seats left without a holder, and `status` names them until one
 * is added.
 */
export async function releaseNode(ctx: ControllerContext, node: string, options: { force?: boolean } = {}): Promise<ReleaseOutcome> {
  const state = await nodeState(ctx, node);
  if (state.lifecycle_state === 'released') throw new NodeNotEnrolled(node, 'released');
  if (state.lifecycle_state === 'revoked') {
    await nodeWorkQueue(ctx).run(node, () => completeRelease(ctx, node));
    await refreshPeers(ctx, node);
    return { node, generation: null, released: true, seats_left_without_holder: [] };
  }
  const lost = await seatsLostWith(ctx.store, node);
  if (lost.length > 0 && options.force !== true) throw new SeatHolderLeaving(node, lost);
  if (lost.length > 0) ctx.log(`node ${node} released with --force: seat(s) ${lost.map((entry) => entry.seat).join(', ')} left without a holder on the mesh`, { level: 'warn', node });
  const sent = await nodeWorkQueue(ctx).run(node, () => sendDeclaration(ctx, node, 'final'));
  return { node, generation: sent.generation, released: false, seats_left_without_holder: lost };
}
