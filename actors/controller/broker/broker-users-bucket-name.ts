/**
 * The replicated KV bucket the acting controller writes the broker's user list to, on a
 * cluster, and its one key: every server's `mesh-control broker sync` reads it and applies it
 * to that server's auth.conf (docs/cluster.md, "Users on every server").
 */
export const BROKER_USERS_BUCKET = 'mesh-broker_users';

/** The bucket's one key. */
export const BROKER_USERS_KEY = 'list';

/** The bucket's stream, as the sync user's permissions name it. */
export const BROKER_USERS_STREAM = `KV_${BROKER_USERS_BUCKET}`;
