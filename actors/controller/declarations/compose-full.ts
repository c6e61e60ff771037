import type { ControllerContext } from '../controller-context';
import { nodeState, overlayOf, type ComposedDeclaration } from './compose-overlay';
import { moduleResourcesOf } from '../modules/compose-with-modules';
import { overlayResources } from './overlay-resources';
import { readSeatState, seatResources, seatRoster } from '../seats/compose-seats';

/**
 * Everything `node` should hold: the overlay's resources, what was declared for it
 * (`mesh-control node declare`), then its modules at the revisions its assignments pin (a
 * module moves to a newer revision only through a plan or a push). When the node re-enrolled into a record that had a copy of
 * what it owned, that copy rides along as `previously_owned`, so a machine that lost its store
 * can still remove what is no longer declared. The seats add what they mean on this node (the
 * resolver's configuration on its holders, resolv.conf everywhere) and the roster fact.
 */
export async function composeFull(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string): Promise<ComposedDeclaration> {
  const state = await nodeState(ctx, node);
  const overlay = await overlayOf(ctx, state);
  const seats = await readSeatState(ctx.store);
  const roster = seatRoster(node, seats, overlay.names);
  return {
    kind: 'full',
    resources: [
      ...overlayResources(node, overlay, ctx.config.overlay.interface, state.profile),
      ...seatResources(node, seats, overlay.names, state.profile),
      ...state.declared_resources,
      ...(await moduleResourcesOf(ctx, node)).resources,
    ],
    overlay,
    ...(roster === undefined ? {} : { roster }),
    ...(state.previously_owned === null ? {} : { previously_owned: state.previously_owned }),
  };
}
