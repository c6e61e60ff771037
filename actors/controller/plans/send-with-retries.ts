import { backoffCeiling, type LinkBackoff } from '../../../machines/link.machine';
import { isPassingSendFailure } from './send-failure';
import type { NodeSendOutcome } from './send-plan-revision';

/**
 * Longest one node's send may take before the plan counts it failed. Every broker request a send
 * makes has its own limit (the longest, asserting the stream on a cluster electing its leader,
 * 20 s; a send that asserts, publishes, asserts again and publishes again stays under a minute),
 * so this is the last guard: a send still pending then is stuck on something that will not
 * answer, and the plan must hear of it rather than wait in `sending` for ever.
 */
export const PLAN_NODE_SEND_BOUND_MS = 120_000;

/**
 * How often one node's send is tried when the broker or the store did not answer (a server
 * killed, a cluster electing its leaders, the store's connections cut), and the waits between:
 * the link's own backoff (backoffCeiling) from a second, doubling, at most 30 s, jittered down
 * by up to half. Seven attempts span about a minute of waiting, past a cluster's elections after
 * a server dies; what still fails stops the plan with the note naming the node, for a person.
 */
export const PLAN_SEND_RETRY: SendRetry = { firstMs: 1_000, capMs: 30_000, attempts: 7 };

/** The backoff between attempts, and how many attempts in all. */
export type SendRetry = LinkBackoff & { attempts: number };

/** How sendWithRetries goes about it. */
export interface SendWithRetriesOptions {
  retry: SendRetry;
  /** Longest one attempt may take (withinBound). */
  boundMs: number;
  /** The plan's signal: once it aborts (the plan left the state that sends), no attempt is begun. */
  signal: AbortSignal;
  /** True once the plan's runner stopped: no attempt is begun either. */
  stopped?: () => boolean;
  /** Told of each failed attempt: its number, why, and the wait before the next (undefined: none follows). */
  failed?: (attempt: number, reason: string, waitMs: number | undefined) => void;
  /** In [0, 1): the jitter (Math.random unless given). */
  random?: () => number;
}

/**
 * Sends one node the plan's revision (`send`, which never throws: sendPlanRevision), each
 * attempt bounded by `boundMs`; a failure the broker or the store caused (`passing`) is tried
 * again after the backoff, up to `retry.attempts` in all. The outcome of the last attempt.
 */
export async function sendWithRetries(send: () => Promise<NodeSendOutcome>, options: SendWithRetriesOptions): Promise<NodeSendOutcome> {
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await withinBound(send(), options.boundMs);
    if (!('failed' in outcome)) return outcome;
    const again = outcome.passing === true && attempt < options.retry.attempts && !options.signal.aborted && options.stopped?.() !== true;
    const waitMs = again ? Math.round(backoffCeiling(attempt, options.retry) * (1 - random() / 2)) : undefined;
    options.failed?.(attempt, outcome.failed, waitMs);
    if (waitMs === undefined) return outcome;
    await waitOrAbort(waitMs, options.signal);
    if (options.signal.aborted || options.stopped?.() === true) return outcome;
  }
}

/**
 * `send`'s outcome, or failed once `boundMs` has passed without one. The send itself is left to
 * end (it holds its node's work queue until it does, so a later send to that node cannot
 * overtake it), but the plan goes on without waiting for it. It is `passing`: the attempt after
 * queues behind the stuck one and goes out as soon as that ends, still within its own bound.
 */
export async function withinBound(send: Promise<NodeSendOutcome>, boundMs: number): Promise<NodeSendOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<NodeSendOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ failed: `the send did not end within ${Math.round(boundMs / 1000)} s (a broker or store request that never answered)`, passing: true }), boundMs);
  });
  try {
    // A send that threw (its store reads before the send proper) is classed as sendPlanRevision classes its own.
    const thrown = (error: unknown): NodeSendOutcome => ({ failed: error instanceof Error ? error.message : String(error), ...(isPassingSendFailure(error) ? { passing: true } : {}) });
    return await Promise.race([send.catch(thrown), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
