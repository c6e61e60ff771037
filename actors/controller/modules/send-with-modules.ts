import { digestOf } from '../../../schema/canonical';
import type { ControllerContext } from '../controller-context';
import { getNodeDeclarationState, type NodeDeclarationState } from '../declarations/declarations.repo';
import { sendComposed, type DeclarationSent } from '../declarations/send-declaration';
import { NodeNotFound } from '../store/node-not-found';
import { composeWithModules } from './compose-with-modules';
import { recordModuleSend } from './modules.repo';

/** Why a node cannot be sent its full declaration now; `lasting` when waiting will not change it. */
export interface NotSendable {
  reason: string;
  lasting: boolean;
}

/** A full declaration with modules that went out. */
export interface SentWithModules extends DeclarationSent {
  /** Each module it carried, at its version. */
  modules: Record<string, string>;
  /** When it was sent (the controller's clock). */
  sent_at: Date;
}

/** What became of one send: sent, or held with why. */
export type WithModulesOutcome = { sent: SentWithModules } | { held: NotSendable };

/**
 * Whether the node can take a full declaration now: it holds an identity, is not being
 * released, and has reported its overlay applied (the overlay always comes first). Undefined
 * when it can.
 */
export function notSendable(state: NodeDeclarationState): NotSendable | undefined {
  if (state.lifecycle_state === 'released') return { reason: `node ${state.name} is released`, lasting: true };
  if (state.lifecycle_state === 'revoked') return { reason: `node ${state.name}'s identity is revoked until the machine enrols again`, lasting: false };
  if (state.release_generation !== null) return { reason: `node ${state.name} is being released`, lasting: true };
  if (state.overlay_applied_generation === null || state.overlay_address === null) {
    return { reason: state.full_held ?? `node ${state.name} has not reported its overlay applied yet`, lasting: false };
  }
  return undefined;
}

/**
 * Composes `node`'s full declaration with its modules (composeWithModules), sends it
 * (sendComposed: the lease's gate, the next generation, signed, recorded, published) and records
 * which revision of each module it carried. A node that cannot take it now is sent nothing and
 * the outcome says why. Call it inside the node's work queue.
 */
export async function sendWithModules(ctx: ControllerContext, node: string): Promise<WithModulesOutcome> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state === undefined) throw new NodeNotFound(node);
  const held = notSendable(state);
  if (held !== undefined) return { held };
  const { composed, modules } = await composeWithModules(ctx, node);
  const sent = await sendComposed(ctx, node, composed);
  const sentAt = ctx.now();
  await recordModuleSend(ctx.store, { node, generation: sent.generation, modules, resources_digest: digestOf(composed.resources), sent_at: sentAt });
  return { sent: { ...sent, modules, sent_at: sentAt } };
}
