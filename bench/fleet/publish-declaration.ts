import type { JetStreamClient } from '@nats-io/jetstream';
import { RequestError, TimeoutError } from '@nats-io/transport-node';
import { declarationSubject } from '../../actors/shared/bus/subjects';

/** How long a publish waits for the stream's acknowledgement, and how many times it is sent in all. */
export interface PublishPatience {
  ackWaitMs: number;
  tries: number;
}

/**
 * A controller waits for the stream's acknowledgement: under 10,000 nodes' pulls and reports the
 * broker took longer than the client's 5 s default, and the round died on it.
 */
export const CONTROLLER_PATIENCE: PublishPatience = { ackWaitMs: 30_000, tries: 3 };

/** What became of one publish. */
export interface Published {
  /** False when no acknowledgement came in any of the tries. */
  ok: boolean;
  /** Sends after the first. */
  retries: number;
}

/**
 * Publishes a node's declaration to the stream and waits for the stream's acknowledgement, as
 * sendComposed does, sending it again with the same message id when the acknowledgement does
 * not come in time: a publish that did land is counted once by the stream. Not ok after
 * `patience.tries` timeouts; any other error is thrown.
 */
export async function publishDeclaration(js: JetStreamClient, node: string, data: string, msgID: string, patience: PublishPatience = CONTROLLER_PATIENCE): Promise<Published> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await js.publish(declarationSubject(node), data, { msgID, timeout: patience.ackWaitMs });
      return { ok: true, retries: attempt - 1 };
    } catch (error) {
      if (!isTimeout(error)) throw error;
      if (attempt >= patience.tries) return { ok: false, retries: attempt - 1 };
    }
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof TimeoutError || (error instanceof RequestError && error.cause instanceof TimeoutError);
}
