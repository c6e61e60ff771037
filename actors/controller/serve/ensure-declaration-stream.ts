import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, StorageType, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECLARATION_STREAM, DECLARATION_SUBJECTS } from '../../shared/bus/subjects';
import { answeredOrMade, BUCKET_MANAGEMENT_TIMEOUT_MS, streamLook } from './ensure-kv-bucket';

/**
 * Makes sure the broker holds the declaration stream: subjects `mesh.declaration.*`, the latest
 * message per subject only (a node away for a week gets its current declaration, not the
 * week's), on disk so a broker restart keeps what waits for absent nodes. Created when missing;
 * brought back to these settings when someone changed them (storage cannot change in place, and
 * is left as it is). On a cluster it is kept on `replicas` servers. Says which it did.
 */
export async function ensureDeclarationStream(nc: NatsConnection, replicas = 1): Promise<'created' | 'updated' | 'present'> {
  // As long as making a bucket may take: a cluster just started first elects its leader.
  const manager = await jetstreamManager(nc, { timeout: BUCKET_MANAGEMENT_TIMEOUT_MS });
  // Consumers made without a replica count take the stream's: every node's consumer is kept
  // on as many servers as the declarations it delivers.
  const wanted: Partial<StreamConfig> = { subjects: [DECLARATION_SUBJECTS], max_msgs_per_subject: 1, num_replicas: replicas };
  try {
    const info = await manager.streams.info(DECLARATION_STREAM);
    if (isStreamAsWanted(info.config) && (info.config.num_replicas ?? 1) === replicas) return 'present';
    await manager.streams.update(DECLARATION_STREAM, wanted);
    return 'updated';
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
  }
  await answeredOrMade(() => manager.streams.add({ name: DECLARATION_STREAM, ...wanted, storage: StorageType.File }), await streamLook(nc, DECLARATION_STREAM));
  return 'created';
}

/**
 * True when the declaration stream's settings are the ones ensureDeclarationStream makes: its
 * subjects alone, the latest message per subject. The doctor expects what this asserts.
 */
export function isStreamAsWanted(config: Pick<StreamConfig, 'subjects' | 'max_msgs_per_subject'>): boolean {
  return config.subjects?.length === 1 && config.subjects[0] === DECLARATION_SUBJECTS && config.max_msgs_per_subject === 1;
}
