import type { ControllerContext } from '../controller-context';
import { sendCurrent } from '../declarations/send-current';
import type { DeclarationSent } from '../declarations/send-declaration';

/** How long a send may go without its report, once the node has made a pass since, before the report counts as lost. */
export const REPORT_LOST_AFTER_MS = 20_000;

/** What a heartbeat says of the node's last pass, in the node's own clock. */
export interface PassSeen {
  /** The heartbeat's `sent_at`. */
  sentAt: Date;
  /** The heartbeat's `last_reconcile_at`. */
  lastReconcileAt: Date | null;
}

// Per controller: the generation each node was last sent again for, so a lost report costs one send, not one per heartbeat.
const resentFor = new WeakMap<object, Map<string, number>>();

/**
 * A report travels once and nothing acknowledges it (reports.part.ts): one in flight when the
 * acting controller dies, or whose write the store refused, is gone, and the controller would
 * wait on the node for ever (a plan's first machine, status's outstanding sends). A heartbeat
 * saying the node made a pass after the latest send, while that send has had no report for
 * REPORT_LOST_AFTER_MS, means its report was lost (or the node never heard the send): the node
 * is sent its current declaration again, once per generation, and reports on that. The pass's
 * time is read against the heartbeat's own clock, so a node whose clock is off is judged right.
 * A node still unreported after that is the watchdog's (report-overdue), for a person.
 * Call inside the node's work queue, on the acting controller.
 */
export async function resendOnLostReport(ctx: ControllerContext, node: string, seen: PassSeen, at: Date): Promise<DeclarationSent | undefined> {
  if (seen.lastReconcileAt === null) return undefined;
  const [latest] = await ctx.store.query<{ generation: number | string; sent_at: Date | string }>(
    `SELECT d.generation, d.sent_at
       FROM nodes n
       JOIN LATERAL (SELECT generation, sent_at FROM declarations WHERE node = n.name ORDER BY generation DESC LIMIT 1) d ON true
      WHERE n.name = $1 AND n.lifecycle_state = 'enrolled' AND n.release_generation IS NULL
        AND (n.report_generation IS NULL OR n.report_generation < d.generation)`,
    [node],
  );
  if (latest === undefined) return undefined;
  const generation = Number(latest.generation);
  const sentAt = new Date(latest.sent_at).getTime();
  const passAt = at.getTime() - (seen.sentAt.getTime() - seen.lastReconcileAt.getTime());
  if (passAt <= sentAt || at.getTime() - sentAt < REPORT_LOST_AFTER_MS) return undefined;
  const resent = resentFor.get(ctx) ?? new Map<string, number>();
  resentFor.set(ctx, resent);
  if ((resent.get(node) ?? 0) >= generation) return undefined;
  // Marked only once sent (or once there is nothing to send), so a send that failed is tried at the next heartbeat.
  const sent = await sendCurrent(ctx, node);
  resent.set(node, sent?.generation ?? generation);
  if (sent !== undefined) {
    ctx.log(`reports: node ${node} made a pass after generation ${generation} was sent (${new Date(sentAt).toISOString()}), and no report of it reached the store: sent its current declaration again (generation ${sent.generation}) for a report`, { level: 'warn', node, generation });
  }
  return sent;
}
