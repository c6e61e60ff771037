import { DiscardPolicy, jetstream, JetStreamApiCodes, JetStreamApiError, StorageType, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { TimeoutError, type NatsConnection } from '@nats-io/transport-node';

/** A bucket's settings that the controller keeps as it wants them, whoever changed them. */
export interface KvBucketSettings {
  /** The age limit of every key (the stream's max_age); none when 0. */
  ttlMs: number;
  /** Keys kept at most; the oldest write goes first. Unlimited when 0. */
  maxKeys?: number;
  /** The largest value, in bytes. */
  maxValueBytes: number;
  /** How long each request to the broker may take, for every operation on the bucket. */
  timeoutMs: number;
  /** How many servers keep the bucket: the cluster's size (mesh.json `broker.replicas`), 1 unless given. */
  replicas?: number;
}

/** An open bucket, and what raising it past a revision needs. */
export interface KvBucket {
  kv: KV;
  /** The bucket's stream (`KV_<bucket>`). */
  stream: string;
  jsm: JetStreamManager;
}

const NANOS_PER_MS = 1_000_000;

/** How long making, reading or changing a bucket's settings may take. */
export const BUCKET_MANAGEMENT_TIMEOUT_MS = 20_000;

/** How long one look at a stream just made or changed waits before it asks again. */
const LOOK_TIMEOUT_MS = 4_000;

/**
 * Opens the KV bucket `name`, creating it (on disk, one value per key) when missing, and brings
 * its age limit, key limit and value size back to `settings` when they differ: the bucket
 * outlives any one controller, and a limit someone changed by hand would change what the lease
 * or the call history means. A key limit discards the oldest writes, not new ones (a KV bucket's
 * own default refuses new writes once full). On a cluster it is kept on `replicas` servers.
 */
export async function ensureKvBucket(nc: NatsConnection, name: string, settings: KvBucketSettings): Promise<KvBucket> {
  // Making or changing a bucket waits longer than a use of it: on a cluster just started, the
  // servers first elect a JetStream leader and then place the replicas.
  const managing = jetstream(nc, { timeout: Math.max(settings.timeoutMs, BUCKET_MANAGEMENT_TIMEOUT_MS) });
  const stream = `KV_${name}`;
  const jsm = await managing.jetstreamManager();
  const look = await streamLook(nc, stream);
  await answeredOrMade(
    () => new Kvm(managing).create(name, {
      history: 1,
      ttl: settings.ttlMs,
      maxValueSize: settings.maxValueBytes,
      storage: StorageType.File,
      replicas: settings.replicas ?? 1,
    }),
    look,
  );
  // The bucket is there now and the API was checked above: binding asks the broker nothing, so a
  // slow answer under load cannot fail a start at the bucket's short operating timeout.
  const kv = await new Kvm(jetstream(nc, { timeout: settings.timeoutMs, checkAPI: false })).open(name);
  const { config } = await look();
  const wanted: Partial<StreamConfig> = {
    max_age: settings.ttlMs * NANOS_PER_MS,
    max_msg_size: settings.maxValueBytes,
    max_msgs: settings.maxKeys ?? -1,
    // A bucket made before the mesh became a cluster is raised to the cluster's replicas.
    num_replicas: settings.replicas ?? 1,
    ...(settings.maxKeys === undefined ? {} : { discard: DiscardPolicy.Old }),
  };
  const differs = (now: StreamConfig) => Object.entries(wanted).some(([key, value]) => (now as unknown as Record<string, unknown>)[key] !== value);
  if (differs(config)) {
    // The same 2.9 silence as a create: an update made at once by another controller.
    await answeredOrMade(() => jsm.streams.update(stream, wanted), async () => {
      if (differs((await look()).config)) throw new Error('not changed');
    });
  }
  return { kv, stream, jsm };
}

/**
 * Runs `make`, a request that creates (or changes) a stream. nats-server 2.9.10 in a cluster,
 * given two identical creates at once (two controllers starting together), leaves one of them
 * without an answer or answers it "stream not found", though the stream is made: either is
 * followed by `look` at the stream, and the work counts as done when it does not throw. Anything
 * else, or a stream still missing, fails as it failed.
 */
export async function answeredOrMade<T>(make: () => Promise<T>, look: () => Promise<unknown>): Promise<void> {
  try {
    await make();
  } catch (error) {
    if (!(error instanceof TimeoutError || isStreamNotFound(error))) throw error;
    try {
      await look();
    } catch {
      throw error;
    }
  }
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/**
 * A look at `stream` as a controller takes it after making or changing it: asked again, a few
 * seconds apart, while it goes unanswered or the stream another controller is making is not
 * there yet, for as long as making a bucket may take.
 */
export async function streamLook(nc: NatsConnection, stream: string): Promise<() => Promise<StreamInfo>> {
  const looking = await jetstream(nc, { timeout: LOOK_TIMEOUT_MS, checkAPI: false }).jetstreamManager(false);
  return () => untilAnswered(() => looking.streams.info(stream), BUCKET_MANAGEMENT_TIMEOUT_MS, isStreamNotFound);
}

/**
 * Asks again while `ask` times out (or fails as `askAgainAfter` says), until `withinMs` has
 * passed. nats-server 2.9 leaves a stream's info unanswered while a stream just made (or moved)
 * elects its leader, though the stream is there: a second ask a few seconds on is answered.
 */
export async function untilAnswered<T>(ask: () => Promise<T>, withinMs: number, askAgainAfter: (error: unknown) => boolean = () => false): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof TimeoutError || askAgainAfter(error)) || Date.now() >= until) throw error;
      // An answer that came at once is asked again after a pause, not in a tight loop.
      if (!(error instanceof TimeoutError)) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
