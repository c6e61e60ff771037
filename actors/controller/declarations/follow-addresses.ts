import type { InventoryAddress } from '../../../schema/inventory';
import type { ControllerContext } from '../controller-context';
import type { Sql } from '../store/sql-store';
import { getNodeDeclarationState } from './declarations.repo';
import { nodeWorkQueue } from './node-work-queue';
import { nodeReach } from './overlay-endpoint';
import { refreshPeers, sendCurrent } from './send-current';

/** What following a node's addresses did. */
export interface AddressesFollowed {
  /** The addresses differ from those kept, and were kept instead. */
  recorded: boolean;
  /** Where peers reach the node now, when that changed (its endpoint, or none). */
  moved?: { from: string | null; to: string | null };
  /** The nodes sent a new declaration for it. */
  sent: string[];
}

/**
 * Keeps the addresses a node's host reported at `reportedAt` (a heartbeat's sent_at) in place
 * of those kept, in one statement that writes only when they differ and were reported later
 * than those (heartbeats are taken side by side, so one taken late never puts back what a newer
 * one replaced), fenced like every write of the acting controller. Returns the addresses it
 * replaced (null when the node had none), or undefined when nothing was written: the same
 * addresses, older ones, no such node, or a node with no inventory (enrolled by a host that
 * sent none).
 */
export async function recordAddresses(
  sql: Sql,
  name: string,
  addresses: readonly InventoryAddress[],
  reportedAt: Date,
  epoch: number,
): Promise<{ before: InventoryAddress[] | null } | undefined> {
  const [row] = await sql.query<{ before: InventoryAddress[] | null }>(
    `UPDATE nodes n SET inventory = jsonb_set(n.inventory, '{addresses}', $2::jsonb), addresses_reported_at = $3
     FROM (SELECT name, inventory->'addresses' AS addresses FROM nodes WHERE name = $1) old
     WHERE n.name = old.name AND n.inventory IS NOT NULL AND old.addresses IS DISTINCT FROM $2::jsonb
       AND (n.addresses_reported_at IS NULL OR n.addresses_reported_at < $3)
       AND NOT EXISTS (SELECT 1 FROM controller_epoch WHERE epoch > $4)
     RETURNING old.addresses AS before`,
    [name, JSON.stringify(addresses), reportedAt, epoch],
  );
  return row;
}

/**
 * Endpoints follow the node: when the addresses its host reports now give peers another way to
 * reach it than the ones it reported before (it moved network, its DHCP lease changed, it lost
 * its public address), every other node on the overlay is sent its declaration again with the
 * new endpoint — the same push a node joining makes (refreshPeers). The node itself is sent its
 * own when it went from reachable to unreachable or back, since that decides whether it keeps
 * its NAT open with keepalives. Addresses that change nothing peers see (another bridge, a
 * second private address ranked lower) are kept, and nothing is sent.
 *
 * Only for a node on the overlay; must not be awaited from inside a node's work queue.
 */
export async function followAddresses(ctx: ControllerContext, node: string, addresses: readonly InventoryAddress[], reportedAt: Date): Promise<AddressesFollowed> {
  const replaced = await recordAddresses(ctx.store, node, addresses, reportedAt, ctx.epoch());
  if (replaced === undefined) return { recorded: false, sent: [] };
  const state = await getNodeDeclarationState(ctx.store, node);
  const onOverlay = state !== undefined && (state.lifecycle_state === 'enrolled' || state.lifecycle_state === 'disconnected')
    && state.overlay_address !== null && state.wireguard_public_key !== null;
  const from = nodeReach(replaced.before, ctx.config.overlay).endpoint ?? null;
  const to = nodeReach(addresses, ctx.config.overlay).endpoint ?? null;
  if (!onOverlay || from === to) return { recorded: true, sent: [] };

  ctx.log(`overlay: node ${node} is reached at ${to ?? 'no endpoint (it reaches its peers)'} now, not ${from ?? 'no endpoint'}: its peers are sent the change`, { node });
  const sent: string[] = [];
  if ((from === null) !== (to === null)) {
    const own = await nodeWorkQueue(ctx).run(node, () => sendCurrent(ctx, node)).catch((error: unknown) => {
      ctx.log(`overlay: node ${node} could not be sent its own overlay after it moved: ${String(error)}`, { level: 'error', node });
      return undefined;
    });
    if (own !== undefined) sent.push(node);
  }
  for (const peer of await refreshPeers(ctx, node)) sent.push(peer.node);
  return { recorded: true, moved: { from, to }, sent };
}
