import type { Report } from '../../../schema/report';
import type { ControllerContext } from '../controller-context';
import { busObjects } from './bus-objects';
import { getNodeDeclarationState } from './declarations.repo';
import { sendCurrent } from './send-current';
import { sendDeclaration, type DeclarationSent } from './send-declaration';

/**
 * Refusals that say the node's slot held something other than what this controller sent it
 * last: bytes that are not a declaration of this mesh, one for another node, one from an older
 * epoch (a controller that lost the lease published late), or an older generation (a replay).
 * Sending the current declaration again puts it right. A refusal of the content itself (the
 * host's own unit, a shape it does not take) would be refused again, so it is not among them.
 */
const SLOT_REFUSALS: ReadonlySet<string> = new Set(['malformed', 'bad_signature', 'foreign_key', 'wrong_node', 'stale_epoch', 'older_generation']);

/** What a refusal report made the controller do. */
export type RefusalAnswer =
  | { kind: 'none'; why: string }
  | { kind: 'resent'; sent: DeclarationSent }
  /** The node refused too often lately (BusRepairs.takeResend): nothing was sent. */
  | { kind: 'withheld' };

/**
 * Answers a node's report that it refused what its slot held by sending it its current
 * declaration again (final while it is being released), at most RESEND_BOUND times per node per
 * window, so a node that keeps refusing costs a few sends and a count, never a loop. Nothing is
 * sent when the refusal cannot be about the slot as it stands: a generation older than the
 * latest sent (the newer one is already there or on its way), an older generation when the node
 * holds the latest already, an epoch not older than this controller's (its own declarations
 * would be refused again), or the declaration's content. Call inside the node's work queue.
 */
export async function resendOnRefusal(ctx: ControllerContext, report: Report): Promise<RefusalAnswer> {
  const refused = report.refused;
  if (refused === undefined || !SLOT_REFUSALS.has(refused.reason)) return { kind: 'none', why: 'not a refusal of what the slot held' };
  if (refused.reason === 'stale_epoch' && (refused.epoch === undefined || refused.epoch >= ctx.epoch())) return { kind: 'none', why: 'not an epoch older than this controller\'s' };
  const state = await getNodeDeclarationState(ctx.store, report.node);
  if (state === undefined || (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected')) return { kind: 'none', why: 'not a node holding an identity' };
  const [latest] = await ctx.store.query<{ generation: number }>('SELECT max(generation) AS generation FROM declarations WHERE node = $1', [report.node]);
  const latestGeneration = latest?.generation == null ? undefined : Number(latest.generation);
  if (refused.generation !== undefined && latestGeneration !== undefined && refused.generation < latestGeneration) return { kind: 'none', why: `generation ${refused.generation} is older than the latest sent, ${latestGeneration}` };
  if (refused.reason === 'older_generation' && latestGeneration !== undefined && report.generation >= latestGeneration) return { kind: 'none', why: `the node holds generation ${report.generation}, the latest sent` };

  const repairs = busObjects(ctx).repairs;
  const what =
    refused.reason === 'stale_epoch'
      ? `a declaration of epoch ${refused.epoch}`
      : `what its slot held (${refused.reason}${refused.generation === undefined ? '' : ` of generation ${refused.generation}`})`;
  if (!repairs.takeResend(report.node, ctx.now())) {
    repairs.record({ kind: 'refusal_resend_withheld', subject: `node ${report.node}`, detail: `refused ${what} again after its re-sends for now were spent; nothing more is sent to it for its refusals until later`, at: ctx.now() });
    return { kind: 'withheld' };
  }
  // The consumer is asserted again with the send: whatever broke the slot may have touched it.
  busObjects(ctx).forget(report.node);
  const sent = state.release_generation !== null ? await sendDeclaration(ctx, report.node, 'final') : await sendCurrent(ctx, report.node);
  if (sent === undefined) return { kind: 'none', why: 'nothing is sent to the node now' };
  repairs.record({ kind: 'refusal_resent', subject: `node ${report.node}`, detail: `refused ${what}; its ${sent.kind} declaration sent again under epoch ${sent.epoch} (generation ${sent.generation})`, at: ctx.now() });
  return { kind: 'resent', sent };
}
