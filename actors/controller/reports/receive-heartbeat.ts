import { Heartbeat } from '../../../schema/heartbeat';
import type { ControllerContext } from '../controller-context';
import { busObjects } from '../declarations/bus-objects';
import { durationsOf } from '../durations/duration-recorder';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { formatSpan } from '../nodes/format-span';
import { recordHeartbeat } from './record-heartbeat';
import { recordBrokerPins } from '../broker/broker-pins.repo';
import { followAddresses } from '../declarations/follow-addresses';
import { resendOnLostReport } from './resend-on-lost-report';

/**
 * Takes one heartbeat as it arrived on `mesh.node.<node>.heartbeat`: the node was heard from
 * now (the controller's clock, not the node's). One that does not match the contract or names
 * another node than its subject is ignored and logged, and so is one for a node the store does
 * not know (no row is made for it). True when last seen was recorded. A node shown
 * `disconnected` is `enrolled` again, and its absence logged as a fact, not a problem. Only
 * while this controller acts (the lease's gate), under its epoch.
 *
 * A host that says it cannot hear its declarations (its consumer or the stream gone) has that
 * recorded for status, and the acting controller asserts the node's consumer at once rather
 * than at the next read-back: at most once per assertion's lifetime (BusObjects), however often
 * the node says it.
 *
 * The addresses a heartbeat carries replace those kept for the node, and when that moves its
 * endpoint its peers are sent the change (followAddresses). A heartbeat saying the node made a
 * pass long after a send it has not reported on has it sent its declaration again
 * (resendOnLostReport).
 */
export async function receiveHeartbeat(ctx: ControllerContext, subject: string, data: Uint8Array): Promise<boolean> {
  const node = subject.split('.')[2] ?? '';
  let heartbeat;
  try {
    heartbeat = Heartbeat.safeParse(JSON.parse(new TextDecoder().decode(data)));
  } catch {
    heartbeat = undefined;
  }
  if (heartbeat === undefined || !heartbeat.success || heartbeat.data.node !== node) {
    ctx.log(`reports: a heartbeat on ${subject} ignored: it is not a heartbeat of node ${node}`, { level: 'warn', subject });
    return false;
  }
  if (ctx.lease?.isActing() === false) return false;
  const at = ctx.now();
  const { recorded, back, unreported } = await recordHeartbeat(ctx.store, node, heartbeat.data, at, ctx.epoch());
  // What the node pins, for a certificate rotation: kept only when it changed.
  if (recorded && heartbeat.data.broker_fingerprints !== undefined) await recordBrokerPins(ctx.store, node, heartbeat.data.broker_fingerprints, at);
  // Where the node is now, for its peers' endpoints: kept when it changed, and pushed when they see it.
  if (recorded && heartbeat.data.addresses !== undefined) {
    await followAddresses(ctx, node, heartbeat.data.addresses, new Date(heartbeat.data.sent_at))
      .catch((error: unknown) => ctx.log(`reports: node ${node}'s new addresses could not be followed (a write that failed is tried again at its next heartbeat): ${error instanceof Error ? error.message : String(error)}`, { level: 'error', node }));
  }
  if (!recorded) ctx.log(`reports: a heartbeat of node ${node} ignored: the store has no such node (or a controller under a later epoch acts)`, { level: 'warn', node });
  else durationsOf(ctx.store).heartbeat(node, at);
  if (back !== undefined) {
    const said = heartbeat.data.seconds_since_linked === null ? '' : `; it says it was unlinked ${formatSpan(heartbeat.data.seconds_since_linked * 1000)}`;
    ctx.log(`presence: node ${node} is enrolled again after ${formatSpan(back.seconds * 1000)} away (silent since ${back.from.toISOString()})${said}`, { node });
  }
  if (recorded && heartbeat.data.deaf !== undefined && ctx.lease?.isActing() !== false) {
    await nodeWorkQueue(ctx)
      .run(node, () => busObjects(ctx).assertForDeaf(node))
      .catch((error: unknown) => ctx.log(`reports: node ${node} cannot hear its declarations, and its consumer could not be asserted (the read-back tries again): ${error instanceof Error ? error.message : String(error)}`, { level: 'error', node }));
  }
  // A pass since the latest send, and still no report of it: the report was lost (resendOnLostReport).
  if (recorded && unreported === true && heartbeat.data.deaf === undefined && ctx.lease?.isActing() !== false) {
    const seen = { sentAt: new Date(heartbeat.data.sent_at), lastReconcileAt: heartbeat.data.last_reconcile_at === null ? null : new Date(heartbeat.data.last_reconcile_at) };
    await nodeWorkQueue(ctx)
      .run(node, () => resendOnLostReport(ctx, node, seen, at))
      .catch((error: unknown) => ctx.log(`reports: node ${node}'s report looks lost, and its declaration could not be sent again (its next heartbeat tries again): ${error instanceof Error ? error.message : String(error)}`, { level: 'error', node }));
  }
  return recorded;
}
