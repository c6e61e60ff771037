import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECLARATION_ACK_WAIT_NS, DECLARATION_STREAM, declarationConsumer, declarationSubject } from '../../shared/bus/subjects';

// The stream itself is made by the serving controller at start (serve/ensure-declaration-stream).

/**
 * Gives `node` its durable consumer, filtered to its own subject, delivering everything it
 * holds and waiting for explicit acknowledgement. With `fresh`, any consumer and declaration
 * left from an earlier identity of the node are removed first, so the machine enrolling now
 * starts from what is sent to it now; without, an existing consumer is kept as it is.
 */
export async function openNodeConsumer(nc: NatsConnection, node: string, options: { fresh: boolean }): Promise<void> {
  const manager = await jetstreamManager(nc);
  if (options.fresh) {
    await deleteConsumer(manager, node);
    await manager.streams.purge(DECLARATION_STREAM, { filter: declarationSubject(node) });
  } else if (await consumerExists(manager, node)) {
    return;
  }
  await addNodeConsumer(manager, node, DeliverPolicy.All);
}

/**
 * Adds `node`'s durable consumer as every part expects it: named for the node, filtered to its
 * subject, acknowledged explicitly within DECLARATION_ACK_WAIT_MS, delivering from `deliver` on
 * (All: whatever its slot holds).
 */
export async function addNodeConsumer(manager: Pick<JetStreamManager, 'consumers'>, node: string, deliver: typeof DeliverPolicy.All | typeof DeliverPolicy.New): Promise<void> {
  await manager.consumers.add(DECLARATION_STREAM, {
    durable_name: declarationConsumer(node),
    filter_subject: declarationSubject(node),
    ack_policy: AckPolicy.Explicit,
    ack_wait: DECLARATION_ACK_WAIT_NS,
    deliver_policy: deliver,
  });
}

/**
 * Removes the node's consumer and its waiting declaration: what a released node leaves on the
 * broker. Already gone is fine.
 */
export async function closeNodeConsumer(nc: NatsConnection, node: string): Promise<void> {
  const manager = await jetstreamManager(nc);
  await deleteConsumer(manager, node);
  await manager.streams.purge(DECLARATION_STREAM, { filter: declarationSubject(node) });
}

/** Deletes `node`'s consumer; already gone is fine. */
export async function deleteConsumer(manager: Pick<JetStreamManager, 'consumers'>, node: string): Promise<void> {
  try {
    await manager.consumers.delete(DECLARATION_STREAM, declarationConsumer(node));
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
  }
}

/** True when `node`'s declaration consumer is on the broker. */
export async function consumerExists(manager: JetStreamManager, node: string): Promise<boolean> {
  try {
    await manager.consumers.info(DECLARATION_STREAM, declarationConsumer(node));
    return true;
  } catch (error) {
    if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return false;
    throw error;
  }
}

/** True when `error` is the JetStream API's answer `code` (JetStreamApiCodes). */
export function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}
