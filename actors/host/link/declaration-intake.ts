import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECLARATION_STREAM, NODE_JS_API_PREFIX, declarationConsumer } from '../../shared/bus/subjects';
import { retryDelay, type RetryPolicy } from './retry-delay';

/** What the intake hands each message to. */
export interface DeclarationHandler {
  /**
   * Takes one message's bytes: decides, and stores or reports. The message is acknowledged
   * only after this resolves; if it throws, the message is left for redelivery.
   */
  take(data: Uint8Array): Promise<void>;
  /** A line for the host's log. */
  note(line: string): void;
}

/** A running intake on one connection. */
export interface DeclarationIntake {
  /** Stops pulling and waits for the message in hand, if any, to be finished. */
  stop(): Promise<void>;
}

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
 */
export function startDeclarationIntake(connection: NatsConnection, node: string, handler: DeclarationHandler, retry: RetryPolicy = INTAKE_RETRY): DeclarationIntake {
  const stop = new AbortController();
  let messages: ConsumerMessages | undefined;
  const running = (async () => {
    let failures = 0;
    let lastProblem = '';
    while (!stop.signal.aborted && !connection.isClosed()) {
      try {
        const consumer = await jetstream(connection, { apiPrefix: NODE_JS_API_PREFIX }).consumers.get(DECLARATION_STREAM, declarationConsumer(node));
        messages = await consumer.consume({ max_messages: 4 });
        if (stop.signal.aborted) break;
        failures = 0;
        lastProblem = '';
        for await (const message of messages) {
          try {
            await handler.take(message.data);
          } catch (error) {
            handler.note(`could not take a declaration (it stays on the broker and comes again): ${messageOf(error)}`);
            message.nak(REDELIVER_AFTER_MS);
            continue;
          }
          await message.ackAck().catch((error: unknown) => {
            handler.note(`a declaration was taken but its acknowledgement did not reach the broker (${messageOf(error)}); if it comes again it is refused as already held`);
          });
        }
      } catch (error) {
        if (stop.signal.aborted || connection.isClosed()) break;
        failures += 1;
        // Said when it changes: a missing consumer is retried quietly until it appears.
        const problem = messageOf(error);
        if (problem !== lastProblem) handler.note(`cannot read declarations from the broker: ${problem}; trying again`);
        lastProblem = problem;
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
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
