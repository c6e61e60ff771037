import type { NatsConnection } from '@nats-io/transport-node';
import { ensureKvBucket, type KvBucket } from '../serve/ensure-kv-bucket';

/** The broker's KV bucket holding the lease. */
export const LEASE_BUCKET = 'mesh-controller_lease';

/** The one key of the lease bucket: who holds it. */
export const LEASE_KEY = 'holder';

/** How long one request about the lease may take before it counts as the broker unreachable. */
export const LEASE_REQUEST_TIMEOUT_MS = 2_000;

/**
 * Opens the lease bucket: one value per key, aged out after `ttlMs` (the lease's age: a holder
 * that stops renewing loses it this long after its last write). `bucket` is for tests that run
 * several leases on one broker; `replicas` is the cluster's size.
 */
export function openLeaseBucket(nc: NatsConnection, options: { ttlMs: number; timeoutMs?: number; bucket?: string; replicas?: number }): Promise<KvBucket> {
  return ensureKvBucket(nc, options.bucket ?? LEASE_BUCKET, {
    ttlMs: options.ttlMs,
    maxValueBytes: 1024,
    timeoutMs: options.timeoutMs ?? LEASE_REQUEST_TIMEOUT_MS,
    ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
  });
}
