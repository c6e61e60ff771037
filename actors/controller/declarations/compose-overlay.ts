import type { DeclarationKind } from '../../../schema/declaration';
import type { Overlay } from '../../../schema/overlay';
import type { Owned } from '../../../schema/owned';
import type { Resource } from '../../../schema/resource';
import type { ControllerContext } from '../controller-context';
import { NodeNotFound } from '../store/node-not-found';
import { getNodeDeclarationState, overlayMembers, type NodeDeclarationState } from './declarations.repo';
import { NodeNotOnOverlay } from './declaration-errors';
import { overlayFor } from './overlay-for';
import { overlayResources } from './overlay-resources';

/** A declaration's content before it is given a generation, an epoch and a signature. */
export interface ComposedDeclaration {
  kind: DeclarationKind;
  resources: Resource[];
  overlay?: Overlay;
  previously_owned?: Owned;
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
  return { kind: 'overlay', resources: overlayResources(node, overlay, ctx.config.overlay.interface, state.profile?.init), overlay };
}

/** The node's declaration state, or NodeNotFound. */
export async function nodeState(ctx: Pick<ControllerContext, 'store'>, node: string): Promise<NodeDeclarationState> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state === undefined) throw new NodeNotFound(node);
  return state;
}

/** The node's overlay as the mesh stands now. */
export async function overlayOf(ctx: Pick<ControllerContext, 'store' | 'config'>, state: NodeDeclarationState): Promise<Overlay> {
  if (state.overlay_address === null || state.wireguard_public_key === null) throw new NodeNotOnOverlay(state.name);
  const self = { name: state.name, address: state.overlay_address, wireguard_public_key: state.wireguard_public_key };
  const members = (await overlayMembers(ctx.store)).filter((member) => member.name !== state.name);
  return overlayFor(self, [...members, self], ctx.config.overlay.listen_port);
}
