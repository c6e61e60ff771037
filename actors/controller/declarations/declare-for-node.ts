import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';
import { resourceKey, ResourceList } from '../../../schema/resource';
import type { ControllerContext } from '../controller-context';
import { nodeState } from './compose-overlay';
import { setDeclaredResources, getNodeDeclarationState } from './declarations.repo';
import { DeclaredResourceReserved, NodeBeingReleased, NodeNotEnrolled } from './declaration-errors';
import { nodeWorkQueue } from './node-work-queue';
import { refuseShapesOfKind } from './refuse-shapes-of-kind';
import { MESH_HOSTS_PATH, wireguardConfigPath, wireguardServiceName } from './overlay-resources';
import type { DeclarationSent } from './send-declaration';
import { refuseCollisions } from '../modules/node-declarers';
import { sendWithModules } from '../modules/send-with-modules';
import { refuseDeclaredSecrets } from '../secrets/secret-file-rules';

/** The arguments of `node.declare`: the node, and the resources of a `{"resources": [...]}` file. */
export const NodeDeclareArgs = z.strictObject({ node: NodeName, resources: ResourceList });
/** See {@link NodeDeclareArgs}. */
export type NodeDeclareArgs = z.infer<typeof NodeDeclareArgs>;

/** What `node.declare` did. */
export interface DeclareOutcome {
  node: string;
  /** How many resources are now declared for the node. */
  resources: number;
  /** The full declaration sent, or null when it waits for the overlay. */
  sent: DeclarationSent | null;
  /** Why nothing was sent yet, when nothing was. */
  held: string | null;
}

/**
 * Keeps `resources` as what the node should hold beside its overlay, and sends the node its
 * full declaration — once its overlay is applied. Before that, the resources are kept and go
 * with the full declaration the node's overlay report releases: a node is made reachable
 * before it is given anything that could break it.
 *
 * Refused: a node without an identity (NodeNotEnrolled), one being released
 * (NodeBeingReleased), a resource the overlay writes itself (DeclaredResourceReserved), and a
 * resource one of the node's modules declares too (ModuleCollision, naming the module and the
 * key). The declaration sent records the module revisions it carries, as every send with
 * modules does, so `push --behind` knows the node is not behind.
 */
export async function declareForNode(ctx: ControllerContext, args: NodeDeclareArgs): Promise<DeclareOutcome> {
  const { node, resources } = args;
  const state = await nodeState(ctx, node);
  if (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected') throw new NodeNotEnrolled(node, state.lifecycle_state);
  if (state.release_generation !== null) throw new NodeBeingReleased(node, state.release_generation);
  const iface = ctx.config.overlay.interface;
  const service = wireguardServiceName(iface, state.profile?.init);
  const reserved = new Set([`file:${wireguardConfigPath(iface)}`, `file:${MESH_HOSTS_PATH}`, ...(service === undefined ? [] : [`service:${service}`])]);
  const clash = resources.map(resourceKey).find((key) => reserved.has(key));
  if (clash !== undefined) throw new DeclaredResourceReserved(clash);
  refuseShapesOfKind(node, state.profile, resources, 'nothing was declared');
  refuseDeclaredSecrets(node, resources);

  return nodeWorkQueue(ctx).run(node, async () => {
    await refuseCollisions(ctx, node, { declared: resources }, 'nothing was declared');
    await setDeclaredResources(ctx.store, node, resources, ctx.now());
    const now = await getNodeDeclarationState(ctx.store, node);
    if (now === undefined || now.release_generation !== null) return { node, resources: resources.length, sent: null, held: 'the node is being released' };
    if (now.overlay_applied_generation === null) {
      return { node, resources: resources.length, sent: null, held: now.full_held ?? 'waiting for the node to report its overlay applied' };
    }
    const outcome = await sendWithModules(ctx, node);
    if ('held' in outcome) return { node, resources: resources.length, sent: null, held: outcome.held.reason };
    const { modules: _modules, sent_at: _sentAt, ...sent } = outcome.sent;
    return { node, resources: resources.length, sent, held: null };
  });
}
