import type { NatsConnection } from '@nats-io/transport-node';
import { ensureKvBucket, type KvBucket } from '../serve/ensure-kv-bucket';

/** The broker's KV bucket holding every open condition (and each cleared one for ten minutes), one key each. */
export const CONDITIONS_BUCKET = 'mesh-controller_conditions';

/** The broker's KV bucket keeping every condition's transitions, one key each. */
export const CONDITION_HISTORY_BUCKET = 'mesh-controller_condition-history';

/** Transitions are kept this long (seed 003: ninety days)… */
export const CONDITION_HISTORY_KEPT_MS = 90 * 24 * 60 * 60 * 1000;

/** …and at most this many, the oldest going first, so a flapping signal cannot fill the broker's disk. */
export const CONDITION_HISTORY_KEPT = 100_000;

/** Both buckets, as the condition store uses them. */
export interface ConditionBuckets {
  conditions: KvBucket;
  history: KvBucket;
}

/** Names other than production's, for tests that keep their conditions apart. */
export interface ConditionBucketNames {
  conditions?: string;
  history?: string;
}

/** Opens (creating when missing) the conditions bucket and the history bucket with their limits, on `replicas` servers. */
export async function openConditionBuckets(nc: NatsConnection, names: ConditionBucketNames = {}, replicas = 1): Promise<ConditionBuckets> {
  const conditions = await ensureKvBucket(nc, names.conditions ?? CONDITIONS_BUCKET, { ttlMs: 0, maxValueBytes: 16 * 1024, timeoutMs: 5_000, replicas });
  const history = await ensureKvBucket(nc, names.history ?? CONDITION_HISTORY_BUCKET, {
    ttlMs: CONDITION_HISTORY_KEPT_MS,
    maxKeys: CONDITION_HISTORY_KEPT,
    maxValueBytes: 16 * 1024,
    timeoutMs: 5_000,
    replicas,
  });
  return { conditions, history };
}
