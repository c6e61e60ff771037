import { gunzipSync, gzipSync } from 'node:zlib';
import type { NatsConnection } from '@nats-io/transport-node';
import { ensureKvBucket, type KvBucket } from '../serve/ensure-kv-bucket';
import type { BrokerUser } from './auth-file';
import { BROKER_USERS_BUCKET } from './broker-users-bucket-name';

/**
 * The largest list the bucket takes: nats-server's default largest message (1 MiB), less room
 * for headers. Compressed, a node's entry is about 45 bytes (its nkey does not compress), so
 * about 20,000 nodes fit.
 */
export const BROKER_USERS_MAX_BYTES = 1_000_000;

/** The bucket's value could not be read as a user list. */
export class BrokerUsersUnreadable extends Error {}

/**
 * The user list as the bucket holds it: `{ format: 1, users }` as JSON, gzipped (a list of
 * thousands of nodes would not fit in one message otherwise).
 */
export function encodeBrokerUsers(users: readonly BrokerUser[]): Uint8Array {
  const bytes = gzipSync(Buffer.from(JSON.stringify({ format: 1, users }), 'utf8'));
  if (bytes.length > BROKER_USERS_MAX_BYTES) {
    throw new BrokerUsersUnreadable(`the broker's user list is ${bytes.length} bytes compressed, more than the bucket's ${BROKER_USERS_MAX_BYTES}; split the fleet over more than one mesh`);
  }
  return bytes;
}

/**
 * Reads a value of the bucket back. Only its shape is checked here; every entry is checked
 * again when it is rendered (renderAuthFile), so nothing unchecked reaches a server's auth.conf.
 */
export function decodeBrokerUsers(bytes: Uint8Array): BrokerUser[] {
  let parsed: { format?: unknown; users?: unknown };
  try {
    parsed = JSON.parse(gunzipSync(bytes).toString('utf8')) as { format?: unknown; users?: unknown };
  } catch (error) {
    throw new BrokerUsersUnreadable(`the user list in bucket ${BROKER_USERS_BUCKET} is not gzipped JSON (${(error as Error).message})`);
  }
  if (parsed?.format !== 1 || !Array.isArray(parsed.users)) throw new BrokerUsersUnreadable(`the user list in bucket ${BROKER_USERS_BUCKET} is not format 1 with a list of users`);
  return parsed.users as BrokerUser[];
}

/** Opens (creating when missing) the bucket, kept on `replicas` servers: the acting controller's side. */
export function openBrokerUsersBucket(nc: NatsConnection, replicas: number): Promise<KvBucket> {
  return ensureKvBucket(nc, BROKER_USERS_BUCKET, { ttlMs: 0, maxValueBytes: BROKER_USERS_MAX_BYTES, timeoutMs: 5_000, replicas });
}
