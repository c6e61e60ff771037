import type { DeclarationKind } from '../../../schema/declaration';
import type { Overlay } from '../../../schema/overlay';
import type { Owned } from '../../../schema/owned';
import type { Resource } from '../../../schema/resource';
import type { SeatRoster } from '../../../schema/seat';
import type { ControllerContext } from '../controller-context';
import { NodeNotFound } from '../store/node-not-found';
import { getNodeDeclarationState, overlayMembersWithAddresses, type NodeDeclarationState } from './declarations.repo';
import { NodeNotOnOverlay } from './declaration-errors';
import { nodeReach } from './overlay-endpoint';
import { overlayFor, type OverlayMember } from './overlay-for';
import { overlayResources } from './overlay-resources';

/** A declaration's content before it is given a generation, an epoch and a signature. */
export interface ComposedDeclaration {
  kind: DeclarationKind;
  resources: Resource[];
  overlay?: Overlay;
  previously_owned?: Owned;
  /** Each replicated seat's holders, this node first (a full declaration, when one is held). */
  roster?: SeatRoster;
}

/**
 * The overlay declaration of `node`, and nothing else: its address and WireGuard key, every
 * other node on the overlay as a peer, the names of all of them — written as the WireGuard
 * configuration, the names file and (where its init allows) the wg-quick service. The node is
 * made reachable before it is given anything that could break it.
 */
export async function composeOverlay(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string): Promise<ComposedDeclaration> {
  const state = await nodeState(ctx, node);
  const overlay = await overlayOf(ctx, state);
  // The overlay kind carries files, directories and services only (schema/declaration.ts): the
  // action that syncs a running interface rides with the full declaration, which follows at
  // once; the first time, the service brings the interface up from the file anyway.
  const resources = overlayResources(node, overlay, ctx.config.overlay.interface, state.profile).filter((resource) => resource.shape !== 'action');
  return { kind: 'overlay', resources, overlay };
}

/** The node's declaration state, or NodeNotFound. */
export async function nodeState(ctx: Pick<ControllerContext, 'store'>, node: string): Promise<NodeDeclarationState> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state === undefined) throw new NodeNotFound(node);
  return state;
}

/**
 * The node's overlay as the mesh stands now: each member at the endpoint its reported
 * addresses give (overlay-endpoint.ts), or without one when it cannot be reached.
 */
export async function overlayOf(ctx: Pick<ControllerContext, 'store' | 'config'>, state: NodeDeclarationState): Promise<Overlay> {
  if (state.overlay_address === null || state.wireguard_public_key === null) throw new NodeNotOnOverlay(state.name);
  const rows = await overlayMembersWithAddresses(ctx.store);
  const reached = (row: { name: string; address: string; wireguard_public_key: string; addresses: Parameters<typeof nodeReach>[0] }): OverlayMember => {
    const reach = nodeReach(row.addresses, ctx.config.overlay);
    return { name: row.name, address: row.address, wireguard_public_key: row.wireguard_public_key, ...(reach.endpoint === undefined ? {} : { endpoint: reach.endpoint }) };
  };
  const ownAddresses = rows.find((row) => row.name === state.name)?.addresses ?? null;
  const self = reached({ name: state.name, address: state.overlay_address, wireguard_public_key: state.wireguard_public_key, addresses: ownAddresses });
  const members = rows.filter((row) => row.name !== state.name).map(reached);
  return overlayFor(self, [...members, self], ctx.config.overlay.listen_port);
}
