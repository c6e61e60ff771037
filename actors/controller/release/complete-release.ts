import type { ControllerContext } from '../controller-context';
import { closeNodeConsumer } from '../declarations/declaration-stream';

/**
 * Ends a node: its broker user is removed (the broker drops its connection at the reload), its
 * consumer and waiting declaration deleted, and its record marked released, without keys, its
 * overlay address given back to the pool. The record itself stays, for its history.
 *
 * The broker goes first: a record that says released while the broker still lets the node in
 * would be the one outcome worse than a release that has to be asked for again.
 */
export async function completeRelease(ctx: ControllerContext, node: string): Promise<void> {
  await ctx.broker.removeNode(node);
  await closeNodeConsumer(ctx.nc, node);
  const now = ctx.now();
  await ctx.store.query(
    `UPDATE nodes SET lifecycle_state = 'released', public_key = NULL, nkey = NULL, wireguard_public_key = NULL, overlay_address = NULL,
            overlay_applied_generation = NULL, full_held = NULL, release_generation = NULL, release_held = NULL, updated_at = $2
     WHERE name = $1`,
    [node, now],
  );
  ctx.log(`node ${node} released: its broker user, consumer and overlay address are gone`, { node });
}
