import * as z from 'zod';
import type { PlanSend } from '../../../machines/plan.machine';
import { digestOf } from '../../../schema/canonical';
import { NodeName } from '../../../schema/primitives';
import type { ControllerContext } from '../controller-context';
import { nodeState } from '../declarations/compose-overlay';
import { NodeBeingReleased, NodeNotEnrolled } from '../declarations/declaration-errors';
import { overlayMembers } from '../declarations/declarations.repo';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import type { PlanBook } from '../plans/plan-book';
import { composeWithModules } from './compose-with-modules';
import { PushScopeConflict } from './module-errors';
import { assignmentsOf, latestSend, newestRevision, setAssignment } from './modules.repo';
import { notSendable, sendWithModules } from './send-with-modules';
import { tellFreshProviders } from '../provisions/provision-links';

/** The arguments of `push`: a node, or `behind`, or neither (the whole mesh). */
export const PushArgs = z.strictObject({ node: NodeName.optional(), behind: z.boolean().optional() });
/** See {@link PushArgs}. */
export type PushArgs = z.infer<typeof PushArgs>;

/** What a push did to one node. */
export interface PushedNode {
  node: string;
  /** The declaration sent, with each module at its version; null when nothing was sent. */
  sent: { generation: number; modules: Record<string, string> } | null;
  /** Modules moved to their newest revision by this push. */
  moved: Array<{ module: string; from: string; to: string }>;
  /** Why nothing was sent, when nothing was. */
  held: string | null;
}

/** What a push did: its scope, then each node it sent (or could not). */
export interface PushOutcome {
  /** `node`: the one node named; `mesh`: every node; `behind`: every node whose last send differs. */
  scope: 'node' | 'mesh' | 'behind';
  nodes: PushedNode[];
}

/**
 * `mesh-control push`:
 * - `push NODE` sends that node, and only that node, its full declaration with every module at
 *   its newest revision (a revision its policy records, or an open plan has not sent it yet,
 *   included: naming the node is the person's word for it). It never flushes any other node.
 * - `push` with no node does the same for every node of the mesh; its answer says first that it
 *   was the whole mesh.
 * - `push --behind` sends every node whose last declaration differs from what it should hold at
 *   the revisions it runs now (one sent without its modules, say, or never sent them); it moves
 *   no module to a newer revision, so it never rolls out what a plan or a policy holds back.
 *
 * Every open plan is told which nodes a push sent its revision (PlanBook.pushed).
 */
export async function pushNodes(ctx: ControllerContext, book: PlanBook, args: PushArgs): Promise<PushOutcome> {
  if (args.node !== undefined && args.behind === true) throw new PushScopeConflict(args.node);
  if (args.node !== undefined) {
    const state = await nodeState(ctx, args.node);
    if (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected') throw new NodeNotEnrolled(args.node, state.lifecycle_state);
    if (state.release_generation !== null) throw new NodeBeingReleased(args.node, state.release_generation);
    return { scope: 'node', nodes: [await pushNode(ctx, book, args.node, true)] };
  }
  const members = (await overlayMembers(ctx.store)).map((member) => member.name);
  if (args.behind === true) {
    const behind: string[] = [];
    for (const node of members) if (await isBehind(ctx, node)) behind.push(node);
    return { scope: 'behind', nodes: await Promise.all(behind.map((node) => pushNode(ctx, book, node, false))) };
  }
  return { scope: 'mesh', nodes: await Promise.all(members.map((node) => pushNode(ctx, book, node, true))) };
}

/**
 * True when `node` can take a full declaration now and its last declaration is not what it
 * should hold: it was sent without its modules (by a path that does not add them), was never
 * sent its full declaration, or what it was sent differs from what composes now.
 */
export async function isBehind(ctx: ControllerContext, node: string): Promise<boolean> {
  if (notSendable(await nodeState(ctx, node)) !== undefined) return false;
  const latest = await latestSend(ctx.store, node);
  if (latest === undefined || latest.kind === 'overlay') return true;
  if (latest.modules === undefined) return (await assignmentsOf(ctx.store, node)).length > 0;
  const { composed } = await composeWithModules(ctx, node);
  return digestOf(composed.resources) !== latest.modules.resources_digest;
}

async function pushNode(ctx: ControllerContext, book: PlanBook, node: string, toNewest: boolean): Promise<PushedNode> {
  const since = ctx.now();
  const { pushed, send } = await nodeWorkQueue(ctx).run(node, async (): Promise<{ pushed: PushedNode; send?: PlanSend }> => {
    const held = notSendable(await nodeState(ctx, node));
    if (held !== undefined) return { pushed: { node, sent: null, moved: [], held: held.reason } };
    const moved: PushedNode['moved'] = [];
    if (toNewest) {
      for (const assignment of await assignmentsOf(ctx.store, node)) {
        const newest = await newestRevision(ctx.store, assignment.module);
        if (newest !== undefined && newest.seq > assignment.seq) moved.push({ module: assignment.module, from: assignment.version, to: newest.version });
      }
    }
    const at = ctx.now();
    for (const move of moved) await setAssignment(ctx.store, node, move.module, move.to, at);
    try {
      const outcome = await sendWithModules(ctx, node);
      if ('held' in outcome) throw new Error(outcome.held.reason);
      return {
        pushed: { node, sent: { generation: outcome.sent.generation, modules: outcome.sent.modules }, moved, held: null },
        send: { generation: outcome.sent.generation, digest: outcome.sent.digest, at: outcome.sent.sent_at.toISOString() },
      };
    } catch (error) {
      // Not sent: the node's modules stay at the revisions it was last sent.
      for (const move of moved) await setAssignment(ctx.store, node, move.module, move.from, at).catch(() => undefined);
      return { pushed: { node, sent: null, moved: [], held: (error as Error)?.message ?? String(error) } };
    }
  });
  // Outside the node's queue: telling the plans waits for their writes, not for this node.
  if (send !== undefined) await book.pushed(node, await assignmentsOf(ctx.store, node), send);
  // A module moved to a revision that consumes was issued its credential: its providers accept it now.
  if (send !== undefined) await tellFreshProviders(ctx, node, since);
  return pushed;
}
