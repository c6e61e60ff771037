import type { JetStreamClient } from '@nats-io/jetstream';
import { RequestError, TimeoutError } from '@nats-io/transport-node';
import { isPassingSendFailure } from '../../actors/controller/plans/send-failure';
import { declarationSubject } from '../../actors/shared/bus/subjects';

/** How long a publish waits for the stream's acknowledgement, and how many times it is sent in all. */
export interface PublishPatience {
  ackWaitMs: number;
  tries: number;
  /**
   * How long a publish keeps sending again, after waits that grow to 2 s, while the broker
   * refuses it for a passing reason (no server answering for the stream while a cluster elects
   * its leader): counted from the first such refusal.
   */
  settleMs: number;
  /** Told of each passing refusal before the wait that follows it, to say what the broker did. */
  onRefusal?: (error: unknown) => void;
}

/**
 * A controller waits for the stream's acknowledgement: under 10,000 nodes' pulls and reports the
 * broker took longer than the client's 5 s default, and the round died on it. On the cluster
 * with 10,000 consumers a publish was once answered `jetstream is not enabled` for a moment.
 */
export const CONTROLLER_PATIENCE: PublishPatience = { ackWaitMs: 30_000, tries: 3, settleMs: 60_000 };

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
 * `patience.tries` timeouts. A passing refusal (isPassingSendFailure) is sent again after a
 * wait for up to `patience.settleMs`, then thrown; any other error is thrown at once.
 */
export async function publishDeclaration(js: JetStreamClient, node: string, data: string, msgID: string, patience: PublishPatience = CONTROLLER_PATIENCE): Promise<Published> {
  let timeouts = 0;
  let refusedSince: number | undefined;
  for (let sends = 1; ; sends += 1) {
    try {
      await js.publish(declarationSubject(node), data, { msgID, timeout: patience.ackWaitMs });
      return { ok: true, retries: sends - 1 };
    } catch (error) {
      if (isTimeout(error)) {
        timeouts += 1;
        if (timeouts >= patience.tries) return { ok: false, retries: sends - 1 };
        continue;
      }
      if (!isPassingSendFailure(error)) throw error;
      refusedSince ??= Date.now();
      patience.onRefusal?.(error);
      if (Date.now() - refusedSince >= patience.settleMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** Math.min(sends, 5))));
    }
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof TimeoutError || (error instanceof RequestError && error.cause instanceof TimeoutError);
}
