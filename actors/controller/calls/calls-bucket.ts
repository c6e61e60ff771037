import type { NatsConnection } from '@nats-io/transport-node';
import { ensureKvBucket, type KvBucket } from '../serve/ensure-kv-bucket';

/** The broker's KV bucket keeping acting verbs' calls. */
export const CALLS_BUCKET = 'mesh-controller_calls';

/** Calls are kept this long… */
export const CALLS_KEPT_MS = 14 * 24 * 60 * 60 * 1000;

/** …and at most this many, the oldest going first. */
export const CALLS_KEPT = 1_000;

/** The most an answer takes in a kept call; a longer one has its text cut (see boundAnswer). */
export const ANSWER_BOUND_BYTES = 64 * 1024;

/** Opens the calls bucket with its limits. `bucket` is for tests that keep their calls apart; `replicas` is the cluster's size. */
export function openCallsBucket(nc: NatsConnection, options: { bucket?: string; replicas?: number } = {}): Promise<KvBucket> {
  return ensureKvBucket(nc, options.bucket ?? CALLS_BUCKET, {
    ttlMs: CALLS_KEPT_MS,
    maxKeys: CALLS_KEPT,
    // The bounded answer and the call's other fields.
    maxValueBytes: ANSWER_BOUND_BYTES + 16 * 1024,
    timeoutMs: 5_000,
    ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
  });
}
