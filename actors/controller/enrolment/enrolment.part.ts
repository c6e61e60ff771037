import type { Msg } from '@nats-io/transport-node';
import { answerableReply, describeSender } from '../../shared/bus/answerable-reply';
import { enrolmentSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refreshPeers, sendCurrent } from '../declarations/send-current';
import type { ControllerPart } from '../serve/controller-parts';
import { AnswersInHand } from './answers-in-hand';
import { BAD_ENROLMENTS_BEFORE_SPENT, countBadEnrolment } from './count-bad-enrolment';
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
 * The request comes from the enrolment account through a service import, so its reply is a
 * `_R_.` subject the broker maps back to the host's inbox; that mapping survives the reloads of
 * step 2 (nats-server 2.9 forgets the reply permissions it grants at every reload, which is why
 * the controller relies on none). A request with any other reply is refused unanswered (see
 * answerableReply), and it, like a malformed or badly signed request, counts against its token:
 * the BAD_ENROLMENTS_BEFORE_SPENT-th spends it and takes its user off the broker.
 */
export const enrolmentPart: ControllerPart = {
  name: 'enrolment',
  start: async (ctx) => {
    const answers = new AnswersInHand();
    const underWay = new Set<Promise<void>>();
    underWayOf.set(ctx, underWay);
    const subscription = ctx.nc.subscribe(enrolmentSubject('*'), {
      queue: ENROLMENT_QUEUE,
      callback: (error, message) => {
        if (error !== null) {
          ctx.log(`enrolment: subscription error: ${error.message}`, { level: 'error' });
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

/** The requests each running enrolment part is still handling, by the controller's context. */
const underWayOf = new WeakMap<object, Set<Promise<void>>>();

/**
 * Resolves once every enrolment request taken in so far has been handled to its end: answered,
 * its token's user removed, the node sent its overlay and every other node its new peers.
 */
export async function enrolmentsHandled(ctx: object): Promise<void> {
  const underWay = underWayOf.get(ctx);
  while (underWay !== undefined && underWay.size > 0) await Promise.allSettled([...underWay]);
}

async function respond(ctx: ControllerContext, answers: AnswersInHand, message: Msg): Promise<void> {
  const tokenId = message.subject.slice(enrolmentSubject('').length);
  let enrolled: { node: string; nkey: string } | undefined;
  if (!answerableReply(message.reply)) {
    const why = message.reply
      ? `its reply subject ${JSON.stringify(message.reply)} is not one the broker maps back to the host; not answered`
      : 'it had no reply subject; nobody can be told the outcome';
    await countAgainstToken(ctx, answers, tokenId, `a request with token ${tokenId} from ${describeSender(message)}: ${why}`);
    return;
  }
  let bad: string | undefined;
  const answered = answers.hold();
  try {
    const handled = await handleEnrolRequest(ctx, message.subject, message.data);
    if (!handled.reply.ok && (handled.reply.refusal === 'malformed' || handled.reply.refusal === 'proof_invalid')) {
      bad = `it was refused as ${handled.reply.refusal} (${handled.reply.message})`;
    }
    if (handled.enrolled !== undefined) {
      // The node's user first, so the machine can connect as itself the moment it is told.
      // The answer survives this reload: it goes to the `_R_.` reply the broker maps back.
      try {
        await ctx.broker.addNode(handled.enrolled.node, handled.enrolled.nkey);
      } catch (error) {
        ctx.log(`enrolment: node ${handled.enrolled.node}'s broker user could not be added (it is added when the controller next starts): ${String(error)}`, { level: 'error', node: handled.enrolled.node });
      }
    }
    message.respond(JSON.stringify(handled.reply));
    // The answer must be at the broker before the user it goes to is removed.
    await ctx.nc.flush();
    enrolled = handled.enrolled;
  } catch (error) {
    ctx.log(`enrolment: a request with token ${tokenId} failed: ${(error as Error)?.stack ?? String(error)}`, { level: 'error', token: tokenId });
  } finally {
    answered();
  }
  if (bad !== undefined) {
    await countAgainstToken(ctx, answers, tokenId, `a request with token ${tokenId} from ${describeSender(message)}: ${bad}`);
    return;
  }
  if (enrolled === undefined) return;
  const { node } = enrolled;

  // Removing the token's user closes its connections: wait until no answer is on its way out.
  await answers.quiet(QUIET_WAIT_MS);
  try {
    await ctx.broker.removeEnrolment(tokenId);
    await ctx.store.query('UPDATE tokens SET broker_user_removed_at = $2 WHERE id = $1 AND broker_user_removed_at IS NULL', [tokenId, ctx.now()]);
  } catch (error) {
    ctx.log(`enrolment: token ${tokenId}'s broker user could not be removed (the token sweep removes it): ${String(error)}`, { level: 'warn', token: tokenId });
  }
  await nodeWorkQueue(ctx)
    .run(node, () => sendCurrent(ctx, node))
    .catch((error: unknown) => ctx.log(`enrolment: node ${node}'s overlay declaration could not be sent (it is sent when the controller next starts): ${String(error)}`, { level: 'error', node }));
  await refreshPeers(ctx, node);
}

/** Logs a bad request and counts it against its token, spending the token at the limit. */
async function countAgainstToken(ctx: ControllerContext, answers: AnswersInHand, tokenId: string, said: string): Promise<void> {
  let counted;
  try {
    counted = await countBadEnrolment(ctx, tokenId);
  } catch (error) {
    ctx.log(`enrolment: ${said} (it could not be counted against the token: ${String(error)})`, { level: 'warn', token: tokenId });
    return;
  }
  ctx.log(`enrolment: ${said} (${counted.count} of ${BAD_ENROLMENTS_BEFORE_SPENT} bad requests on this token)`, { level: 'warn', token: tokenId });
  if (!counted.spent) return;
  ctx.log(`enrolment: token ${tokenId} is spent after ${counted.count} bad requests; a new token is needed to enrol (mesh-control token issue)`, { level: 'warn', token: tokenId });
  await answers.quiet(QUIET_WAIT_MS);
  try {
    await ctx.broker.removeEnrolment(tokenId);
    await ctx.store.query('UPDATE tokens SET broker_user_removed_at = $2 WHERE id = $1 AND broker_user_removed_at IS NULL', [tokenId, ctx.now()]);
  } catch (error) {
    ctx.log(`enrolment: spent token ${tokenId}'s broker user could not be removed (the token sweep removes it): ${String(error)}`, { level: 'warn', token: tokenId });
  }
}
