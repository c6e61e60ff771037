import type { Msg } from '@nats-io/transport-node';
import { MAPPED_REPLY_PREFIX, OPERATOR_INBOX_PREFIX } from './subjects';

/** The header nats-server adds to a request that crossed a service import made with `share`. */
export const REQUEST_INFO_HEADER = 'Nats-Request-Info';

/** The controller's own inbox prefix: replies a controller in the same account asks on. */
const CONTROLLER_INBOX_PREFIX = '_INBOX.';

/**
 * Whether a responder in the controller's account may answer on this reply subject: a `_R_.`
 * reply, which the server made for a request from another account and maps back into that
 * account, an `_INBOX.` reply of a controller asking in its own account, or the operator's CLI's
 * `_INBOX_operator.` (a user of that account too, subscribing nowhere else). Anything else was
 * chosen by whoever sent the request (with the old single-account broker, a node could name a
 * declaration slot or `$JS.API.STREAM.PURGE…`) and is refused, so an answer is never published
 * with the controller's rights on a subject a sender picked.
 */
export function answerableReply(reply: string | undefined): reply is string {
  if (reply === undefined || reply === '') return false;
  return reply.startsWith(MAPPED_REPLY_PREFIX) || reply.startsWith(CONTROLLER_INBOX_PREFIX) || reply.startsWith(`${OPERATOR_INBOX_PREFIX}.`);
}

/** Who sent a request, as the broker stamped it. */
export interface RequestSender {
  account: string;
  user: string;
}

/**
 * The sender of a request from the `Nats-Request-Info` header, or undefined when there is none
 * (a request from the controller's own account). nats-server 2.9 replaces a header of that name
 * a client sets with its own (actors/controller/broker/bus-attacks.test.ts shows it), so the
 * account and user are the broker's word.
 */
export function requestSenderOf(message: Msg): RequestSender | undefined {
  const raw = message.headers?.get(REQUEST_INFO_HEADER);
  if (raw === undefined || raw === '') return undefined;
  try {
    const info = JSON.parse(raw) as { acc?: unknown; user?: unknown };
    return { account: typeof info.acc === 'string' ? info.acc : '?', user: typeof info.user === 'string' ? info.user : '?' };
  } catch {
    return undefined;
  }
}

/**
 * Whether a request came from the operator's CLI: asked in the controller's account (no stamp)
 * on the operator's inbox prefix, which only the operator's user may subscribe to.
 */
export function fromOperator(message: Msg): boolean {
  return requestSenderOf(message) === undefined && (message.reply ?? '').startsWith(`${OPERATOR_INBOX_PREFIX}.`);
}

/** The sender for a log line: `user X of account Y`, the operator's CLI, or the controller's account. */
export function describeSender(message: Msg): string {
  const sender = requestSenderOf(message);
  if (sender !== undefined) return `user ${sender.user} of account ${sender.account}`;
  return fromOperator(message) ? 'the operator\'s CLI' : 'a sender in the controller\'s account';
}
