import { JetStreamApiCodes, jetstreamManager, type ConsumerConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECLARATION_STREAM, declarationConsumer } from '../../shared/bus/subjects';
import { isAsNodeNeeds } from '../declarations/bus-objects';
import { isApiError } from '../declarations/declaration-stream';
import { isStreamAsWanted } from '../serve/ensure-declaration-stream';
import type { Sql } from '../store/sql-store';
import { failed, passed, type DoctorProbe } from './doctor-probe';

/** How many nodes a failure names before it says how many more. */
const NAMED = 10;

const REPAIR = 'the serving controller\'s read-back puts the stream and consumers right every five minutes (and before each send); if this stays, restart mesh-control serve --dir DIR, which reads them back at start';

/**
 * The declaration stream and every node's consumer exist as the controller asserts them: the
 * stream with its settings (isStreamAsWanted), and for every node holding an identity (enrolled
 * or disconnected, from the store) a consumer reading its subject alone (isAsNodeNeeds). Only
 * read: the doctor says what is wrong, the read-back repairs it.
 */
export function declarationStreamProbe(nc: () => Promise<NatsConnection>, store: Sql): DoctorProbe {
  return {
    name: 'declaration-stream',
    whenCannotRun: 'check that the broker and the store answer (the broker and store probes say which does not), then run mesh-control doctor again',
    run: async () => {
      const manager = await jetstreamManager(await nc());
      let config;
      try {
        config = (await manager.streams.info(DECLARATION_STREAM)).config;
      } catch (error) {
        if (isApiError(error, JetStreamApiCodes.StreamNotFound)) return failed(`the declaration stream ${DECLARATION_STREAM} is missing: no node can receive a declaration`, REPAIR);
        throw error;
      }
      if (!isStreamAsWanted(config)) {
        return failed(`the declaration stream ${DECLARATION_STREAM} has been changed: subjects ${JSON.stringify(config.subjects)}, ${config.max_msgs_per_subject} message(s) per subject`, REPAIR);
      }
      const consumers = new Map<string, ConsumerConfig>();
      for await (const info of manager.consumers.list(DECLARATION_STREAM)) consumers.set(info.name, info.config);
      const nodes = (await store.query<{ name: string }>(`SELECT name FROM nodes WHERE lifecycle_state IN ('enrolled', 'disconnected') ORDER BY name`)).map((row) => row.name);
      const missing: string[] = [];
      const wrong: string[] = [];
      for (const node of nodes) {
        const found = consumers.get(declarationConsumer(node));
        if (found === undefined) missing.push(node);
        else if (!isAsNodeNeeds(found, node)) wrong.push(node);
      }
      if (missing.length + wrong.length > 0) {
        const said = [
          ...(missing.length === 0 ? [] : [`${missing.length} node(s) without their consumer, so they receive no declaration: ${named(missing)}`]),
          ...(wrong.length === 0 ? [] : [`${wrong.length} node(s) whose consumer is not as the node needs it: ${named(wrong)}`]),
        ];
        return failed(said.join('; '), REPAIR);
      }
      return passed(`the stream is as asserted, and all ${nodes.length} node(s) holding an identity have their consumer`);
    },
  };
}

function named(nodes: readonly string[]): string {
  return `${nodes.slice(0, NAMED).join(', ')}${nodes.length > NAMED ? ` and ${nodes.length - NAMED} more` : ''}`;
}
