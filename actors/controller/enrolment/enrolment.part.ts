import type { Msg } from '@nats-io/transport-node';
import { enrolmentSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refreshPeers, sendCurrent } from '../declarations/send-current';
import type { ControllerPart } from '../serve/controller-parts';
import { AnswersInHand } from './answers-in-hand';
import { handleEnrolRequest } from './handle-enrol-request';

/** The queue group enrolment requests are taken in: with several controllers serving, one answers each. */
export const ENROLMENT_QUEUE = 'mesh-enrolment';

/** The longest a node's broker user waits for other enrolments to be answered. */
const QUIET_WAIT_MS = 5000;

/**
 * The enrolment responder. For each request on `mesh.enrol.*`, in this order:
 *
 * 1. decide it (handleEnrolRequest: proof checked, token used, node recorded with its overlay
 *    address, its durable consumer made);
 * 2. add the node's broker user (a reload), then answer on the request's inbox — `{ok: true,
 *    node}`, or a refusal saying why and what next;
 * 3. once no enrolment request is left unanswered, take the token's user off the broker (a
 *    reload; the token's connections close);
 * 4. send the new node its overlay declaration, and every other node its new peers.
 *
 * The answer goes to `_INBOX.enrol.<token id>`, which the controller may always publish to, so
 * the reloads in step 2 (and any other, from `token issue` or the sweep) cannot lose it;
 * nats-server 2.9 forgets the reply permissions it grants at every reload.
 */
export const enrolmentPart: ControllerPart = {
  name: 'enrolment',
  start: async (ctx) => {
    const answers = new AnswersInHand();
    const underWay = new Set<Promise<void>>();
    const subscription = ctx.nc.subscribe(enrolmentSubject('*'), {
      queue: ENROLMENT_QUEUE,
      callback: (error, message) => {
        if (error !== null) {
          ctx.log(`enrolment: subscription error: ${error.message}`);
          return;
        }
        const work = respond(ctx, answers, message).finally(() => underWay.delete(work));
        underWay.add(work);
      },
    });
    return {
      stop: async () => {
        if (!subscription.isClosed()) await subscription.drain().catch(() => undefined);
        while (underWay.size > 0) await Promise.allSettled([...underWay]);
      },
    };
  },
};

async function respond(ctx: ControllerContext, answers: AnswersInHand, message: Msg): Promise<void> {
  const tokenId = message.subject.slice(enrolmentSubject('').length);
  const answered = answers.hold();
  let enrolled: { node: string; nkey: string } | undefined;
  try {
    const handled = await handleEnrolRequest(ctx, message.subject, message.data);
    if (handled.enrolled !== undefined) {
      // The node's user first, so the machine can connect as itself the moment it is told.
      // The answer survives this reload: it goes to `_INBOX.enrol.…`, which the controller may
      // always publish to (see enrolmentInboxPrefix).
      try {
        await ctx.broker.addNode(handled.enrolled.node, handled.enrolled.nkey);
      } catch (error) {
        ctx.log(`enrolment: node ${handled.enrolled.node}'s broker user could not be added (it is added when the controller next starts): ${String(error)}`);
      }
    }
    if (!message.reply) {
      ctx.log(`enrolment: a request with token ${tokenId} had no reply subject; nobody can be told the outcome`);
    } else {
      message.respond(JSON.stringify(handled.reply));
      // The answer must be at the broker before the user it goes to is removed.
      await ctx.nc.flush();
      enrolled = handled.enrolled;
    }
  } catch (error) {
    ctx.log(`enrolment: a request with token ${tokenId} failed: ${(error as Error)?.stack ?? String(error)}`);
  } finally {
    answered();
  }
  if (enrolled === undefined) return;
  const { node } = enrolled;

  // Removing the token's user closes its connections: wait until no answer is on its way out.
  await answers.quiet(QUIET_WAIT_MS);
  try {
    await ctx.broker.removeEnrolment(tokenId);
    await ctx.store.query('UPDATE tokens SET broker_user_removed_at = $2 WHERE id = $1 AND broker_user_removed_at IS NULL', [tokenId, ctx.now()]);
  } catch (error) {
    ctx.log(`enrolment: token ${tokenId}'s broker user could not be removed (the token sweep removes it): ${String(error)}`);
  }
  await nodeWorkQueue(ctx)
    .run(node, () => sendCurrent(ctx, node))
    .catch((error: unknown) => ctx.log(`enrolment: node ${node}'s overlay declaration could not be sent (it is sent when the controller next starts): ${String(error)}`));
  await refreshPeers(ctx, node);
}
