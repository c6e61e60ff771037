import type { Report } from '../../../schema/report';
import type { ControllerContext } from '../controller-context';
import { getNodeDeclarationState, holdFull, holdRelease, markOverlayApplied, sentAfter, sentDeclaration } from '../declarations/declarations.repo';
import { resendOnRefusal } from '../declarations/resend-on-refusal';
import { sendDeclaration, type DeclarationSent } from '../declarations/send-declaration';
import { NotActing } from '../lease/lease-errors';
import { completeRelease } from '../release/complete-release';
import { troubledKeys } from './report-summary';

/** What a kept report moved forward. */
export type Advance =
  | { kind: 'none' }
  /** The overlay applied: the full declaration went out. */
  | { kind: 'full_sent'; sent: DeclarationSent }
  /** The overlay failed: the full declaration is held, and why is on the node's record. */
  | { kind: 'full_held'; reason: string }
  /** The final declaration applied: the node is released. */
  | { kind: 'released' }
  /** The final declaration failed somewhere: the node stays until a release is asked again. */
  | { kind: 'release_held'; reason: string }
  /**
   * The node refused what its slot held (a declaration of an older epoch, which a controller
   * that lost the lease published late; an older generation; bytes that do not verify): it may
   * be what the stream keeps for the node, hiding this controller's. The node's current
   * declaration went out again under this epoch (resendOnRefusal, bounded per node).
   */
  | { kind: 'resent'; sent: DeclarationSent };

/**
 * Moves a node along its declarations on a report the accounts kept: overlay first, then full,
 * and final on release. Only a report that answers a declaration this controller sent (same
 * generation, same digest) moves anything; a refusal moves nothing.
 *
 * - overlay applied with nothing failed: the full declaration is sent (once: a later report on
 *   the same overlay sends nothing more); failed: the full declaration is held and the node's
 *   record says why;
 * - final applied with nothing failed: the node is released (completeRelease); otherwise the
 *   release is held and the record says why;
 * - a refusal of what the node's slot held (see the `resent` advance): the node's current
 *   declaration is sent again, a bounded number of times; any other refusal moves nothing.
 *
 * Call inside the node's work queue.
 */
export async function advanceOnReport(ctx: ControllerContext, report: Report): Promise<Advance> {
  if (report.refused !== undefined) return answerRefusal(ctx, report);
  const sent = await sentDeclaration(ctx.store, report.node, report.generation);
  if (sent === undefined || sent.digest !== report.declaration_digest) return { kind: 'none' };
  const troubled = troubledKeys(report);
  const now = ctx.now();

  if (sent.kind === 'overlay') {
    const state = await getNodeDeclarationState(ctx.store, report.node);
    if (state === undefined || state.release_generation !== null) return { kind: 'none' };
    if (troubled.length > 0) {
      const reason = `the overlay (generation ${sent.generation}) did not apply: ${troubled.join(', ')}`;
      if (state.overlay_applied_generation === null) {
        await holdFull(ctx.store, report.node, reason, now);
        ctx.log(`node ${report.node}: full declaration held: ${reason}`, { level: 'warn', node: report.node });
        return { kind: 'full_held', reason };
      }
      return { kind: 'none' };
    }
    await markOverlayApplied(ctx.store, report.node, sent.generation, now);
    if (await sentAfter(ctx.store, report.node, sent.generation, ['full', 'final'])) return { kind: 'none' };
    return { kind: 'full_sent', sent: await sendDeclaration(ctx, report.node, 'full') };
  }

  if (sent.kind === 'final') {
    const state = await getNodeDeclarationState(ctx.store, report.node);
    if (state?.release_generation !== sent.generation) return { kind: 'none' };
    if (troubled.length > 0) {
      const reason = `the final declaration (generation ${sent.generation}) left resources behind: ${troubled.join(', ')}`;
      await holdRelease(ctx.store, report.node, reason, now);
      ctx.log(`node ${report.node}: release held: ${reason}`, { level: 'warn', node: report.node });
      return { kind: 'release_held', reason };
    }
    await completeRelease(ctx, report.node);
    return { kind: 'released' };
  }

  if (troubled.length > 0) ctx.log(`node ${report.node}: generation ${sent.generation} did not fully apply: ${troubled.join(', ')}`, { level: 'warn', node: report.node, generation: sent.generation });
  return { kind: 'none' };
}

/**
 * A refusal of what the node's slot held: answered by resendOnRefusal (bounded per node). A
 * controller that ran out of lease meanwhile sends nothing: the next holder's declarations win.
 */
async function answerRefusal(ctx: ControllerContext, report: Report): Promise<Advance> {
  try {
    const answer = await resendOnRefusal(ctx, report);
    return answer.kind === 'resent' ? { kind: 'resent', sent: answer.sent } : { kind: 'none' };
  } catch (error) {
    if (error instanceof NotActing) return { kind: 'none' };
    throw error;
  }
}
