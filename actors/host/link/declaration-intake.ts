import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, JetStreamApiCodes, JetStreamApiError, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DeafReason } from '../../../schema/heartbeat';
import { DECLARATION_PULL_EXPIRES_MS, DECLARATION_STREAM, NODE_JS_API_PREFIX, declarationConsumer } from '../../shared/bus/subjects';
import { retryDelay, type RetryPolicy } from './retry-delay';
import { SILENCE_LOOK_SPACING_MS, silenceLook } from './silence-look';
import { messageOf } from '../../shared/message-of';
import { utcTimestamp } from '../../shared/time/utc-timestamp';

/** What the intake hands each message to. */
export interface DeclarationHandler {
  /**
   * Takes one message's bytes: decides, and stores or reports. The message is acknowledged
   * only after this resolves; if it throws, the message is left for redelivery.
   */
  take(data: Uint8Array): Promise<void>;
  /** A line for the host's log. */
  note(line: string): void;
  /** The host's clock, for when it went deaf; the system's unless given. */
  now?(): Date;
}

/** A host that cannot hear its declarations: since when, and what it found gone. */
export interface Deafness {
  since: Date;
  reason: DeafReason;
}

/** A running intake on one connection. */
export interface DeclarationIntake {
  /** Stops pulling and waits for the message in hand, if any, to be finished. */
  stop(): Promise<void>;
  /** While this node's consumer or the declaration stream is found gone from the broker, since when; null while it hears. */
  deafness(): Deafness | null;
}

/** Declarations a pull asks for at most (see the consume below). */
const PULL_BATCH = 4;

/** How long stopping waits for the broker to have the acknowledgements already sent. */
const ACK_FLUSH_MS = 2000;

/** How long a message the host could not take waits before the broker offers it again. */
const REDELIVER_AFTER_MS = 30_000;

/**
 * Waits between attempts to reach the consumer. Capped lower than the connection's: the usual
 * cause is a consumer the controller has not made yet, moments after enrolment.
 */
export const INTAKE_RETRY: RetryPolicy = { firstMs: 1000, capMs: 30_000 };

/**
 * Reads this node's declarations from its durable consumer on the broker, one at a time, in
 * order, for as long as the connection lasts: a declaration sent while the node was away has
 * waited there for it. The controller creates the consumer; a node may only pull from it, read
 * its info and acknowledge, so a missing consumer is waited for, not made.
 *
 * A consumer found gone, whether at the start or while pulling (the broker ends the pull with
 * "consumer deleted", or a look after missed heartbeats finds it missing), leaves the host
 * deaf: said once in the log (not once per retry), told by deafness() to the heartbeats, and
 * tried again on the retry policy until the controller's repair makes it again, when the intake
 * takes declarations again on the same connection. The reconcile meanwhile goes on from the
 * host's store.
 */
export function startDeclarationIntake(connection: NatsConnection, node: string, handler: DeclarationHandler, retry: RetryPolicy = INTAKE_RETRY): DeclarationIntake {
  const stop = new AbortController();
  let messages: ConsumerMessages | undefined;
  let deaf: Deafness | null = null;
  const becomeDeaf = (reason: DeafReason): void => {
    if (deaf !== null || stop.signal.aborted) return;
    deaf = { since: handler.now?.() ?? new Date(), reason };
    const gone = reason === 'stream_not_found' ? `the declaration stream ${DECLARATION_STREAM}` : `this node's consumer ${declarationConsumer(node)}`;
    handler.note(`deaf: ${gone} is gone from the broker, so no declaration can arrive; the host keeps reconciling what it holds, says so in its heartbeats, and takes declarations again once the controller makes it again`);
  };
  const running = (async () => {
    let failures = 0;
    let lastProblem = '';
    while (!stop.signal.aborted && !connection.isClosed()) {
      try {
        const consumer = await jetstream(connection, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(node));
        // Room for four, asked again once one is left: each pull crosses the broker's account
        // import with a response mapping of its own, and the client's default (ask again at
        // three left) made a fresh pull for every declaration taken.
        // Bound: when the pull misses heartbeats the client pulls again without asking for the
        // consumer's info each time; silenceLook below looks, spaced, instead.
        const pulling = await consumer.consume({ max_messages: PULL_BATCH, threshold_messages: 1, expires: DECLARATION_PULL_EXPIRES_MS, bind: true });
        messages = pulling;
        if (stop.signal.aborted) break;
        failures = 0;
        lastProblem = '';
        if (deaf !== null) {
          handler.note(`hearing again: ${declarationConsumer(node)} is back on the broker (deaf since ${utcTimestamp((deaf as Deafness).since)})`);
          deaf = null;
        }
        const lost = (reason: DeafReason): void => {
          becomeDeaf(reason);
          failures = 1;
          // Ends the loop below; the consumer is looked for again on the retry policy.
          void pulling.close().catch(() => undefined);
        };
        void watchForLoss(pulling, lost, silenceLook({ look: () => consumer.info(), missing: missingResource, lost, spacingMs: SILENCE_LOOK_SPACING_MS }));
        for await (const message of pulling) {
          try {
            await handler.take(message.data);
          } catch (error) {
            handler.note(`could not take a declaration (it stays on the broker and comes again): ${messageOf(error)}`);
            message.nak(REDELIVER_AFTER_MS);
            continue;
          }
          // A plain acknowledgement, not one the broker confirms: a confirmation is one more
          // answer mapped back across the accounts for every declaration, and it changes
          // nothing. An acknowledgement lost on the way has the broker offer the declaration
          // again after DECLARATION_ACK_WAIT_MS, and the gate refuses it as already held.
          message.ack();
        }
      } catch (error) {
        if (stop.signal.aborted || connection.isClosed()) break;
        failures += 1;
        const missing = missingResource(error);
        if (missing !== undefined) {
          becomeDeaf(missing);
        } else {
          // Said when it changes.
          const problem = messageOf(error);
          if (problem !== lastProblem) handler.note(`cannot read declarations from the broker: ${problem}; trying again`);
          lastProblem = problem;
        }
      }
      if (stop.signal.aborted || connection.isClosed()) break;
      await sleep(retryDelay(Math.max(failures, 1), retry), undefined, { signal: stop.signal }).catch(() => undefined);
    }
  })();
  return {
    stop: async () => {
      stop.abort();
      await messages?.close().catch(() => undefined);
      await running;
      // Acknowledgements are sent plainly (see above): one still in the client's buffer would
      // be dropped when the connection closes, and the declaration offered again to the next
      // start. A round trip to the broker, bounded, sees every one of them there first.
      if (!connection.isClosed()) await Promise.race([connection.flush().catch(() => undefined), sleep(ACK_FLUSH_MS, undefined, { ref: false })]);
    },
    deafness: () => deaf,
  };
}

/**
 * Calls `lost` once when the pull's status says its consumer or the stream is gone, and
 * `silent` when the pull misses its heartbeats (a consumer deleted between two pulls says
 * nothing else).
 */
async function watchForLoss(messages: ConsumerMessages, lost: (reason: DeafReason) => void, silent: () => Promise<void>): Promise<void> {
  for await (const status of messages.status()) {
    if (status.type === 'consumer_deleted' || status.type === 'consumer_not_found') return lost('consumer_not_found');
    if (status.type === 'stream_not_found') return lost('stream_not_found');
    if (status.type === 'heartbeats_missed' || status.type === 'no_responders') void silent();
  }
}

/** Which resource an error from the broker says is missing, if that is what it says. */
function missingResource(error: unknown): DeafReason | undefined {
  if (!(error instanceof JetStreamApiError)) return undefined;
  if (error.code === JetStreamApiCodes.ConsumerNotFound) return 'consumer_not_found';
  if (error.code === JetStreamApiCodes.StreamNotFound) return 'stream_not_found';
  return undefined;
}
