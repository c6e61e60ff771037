import { jetstreamManager, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { Declaration } from '../../../schema/declaration';
import { DECLARATION_STREAM, declarationConsumer, declarationSubject } from '../../shared/bus/subjects';
import { openEnvelopeWithDigest } from '../../shared/crypto/envelope';
import type { ControllerContext } from '../controller-context';
import { NotActing } from '../lease/lease-errors';
import { busObjects, isAsNodeNeeds } from './bus-objects';
import { getNodeDeclarationState } from './declarations.repo';
import { nodeWorkQueue } from './node-work-queue';
import { sendCurrent } from './send-current';
import { sendDeclaration } from './send-declaration';

/** How many nodes one read-back looks at side by side. */
const SIDE_BY_SIDE = 16;

/** What one read-back put right. */
export interface ReadBack {
  /** Nodes looked at. */
  nodes: number;
  /** Consumers made again or replaced. */
  consumers: number;
  /** Slots found missing or wrong, whose node was sent its declaration again. */
  republished: number;
  /** Nodes that could not be looked at (the reason is in the log). */
  failed: number;
}

interface LatestSent {
  generation: number;
  digest: string;
}

/**
 * Reads the declaration stream back against the store (seed 003: every five minutes): the
 * stream with its settings, then for every node holding an identity its consumer (made again
 * when missing, replaced when wrong) and its slot, which must hold the latest declaration sent
 * to it since it enrolled (a node sent nothing yet is left to its enrolment), signed by this
 * mesh's key. A slot that is empty, holds an older or another generation, or something that
 * does not verify, is put right by sending the node its current declaration again (final while
 * it is being released). Each repair is counted and logged by BusObjects. Every node is looked
 * at inside its work queue, so a send under way is never taken for a missing one; a node that
 * cannot be looked at is logged and the rest go on.
 * Does nothing while this controller is not acting.
 */
export async function readBackDeclarations(ctx: ControllerContext): Promise<ReadBack> {
  const outcome: ReadBack = { nodes: 0, consumers: 0, republished: 0, failed: 0 };
  if (ctx.lease !== undefined && !ctx.lease.isActing()) return outcome;
  const objects = busObjects(ctx);
  objects.forgetStream();
  await objects.assertStream();
  const manager = await jetstreamManager(ctx.nc);
  const consumers = new Map<string, ConsumerConfig>();
  for await (const info of manager.consumers.list(DECLARATION_STREAM)) consumers.set(info.name, info.config);
  const names = (await ctx.store.query<{ name: string }>(`SELECT name FROM nodes WHERE lifecycle_state IN ('enrolled', 'disconnected') ORDER BY name`)).map((row) => row.name);
  outcome.nodes = names.length;

  for (let start = 0; start < names.length; start += SIDE_BY_SIDE) {
    await Promise.all(
      names.slice(start, start + SIDE_BY_SIDE).map(async (node) => {
        try {
          const repaired = await nodeWorkQueue(ctx).run(node, () => readBackNode(ctx, manager, node, consumers.get(declarationConsumer(node))));
          if (repaired.consumer) outcome.consumers += 1;
          if (repaired.republished) outcome.republished += 1;
        } catch (error) {
          if (error instanceof NotActing) return;
          outcome.failed += 1;
          ctx.log(`read-back: node ${node} could not be looked at (the next read-back tries again): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn', node });
        }
      }),
    );
  }
  return outcome;
}

async function readBackNode(ctx: ControllerContext, manager: JetStreamManager, node: string, listed: ConsumerConfig | undefined): Promise<{ consumer: boolean; republished: boolean }> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state === undefined || (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected')) return { consumer: false, republished: false };
  const objects = busObjects(ctx);
  // A listed consumer as the node needs it is taken as it is; anything else is asserted, which
  // makes it again or replaces it.
  const consumerRight = listed !== undefined && isAsNodeNeeds(listed, node);
  const consumer = !consumerRight && (await objects.assertConsumer(manager, node)) !== 'present';

  const [latest] = await ctx.store.query<LatestSent>(
    `SELECT d.generation, d.digest FROM declarations d JOIN nodes n ON n.name = d.node
     WHERE d.node = $1 AND (n.enrolled_at IS NULL OR d.sent_at >= n.enrolled_at) ORDER BY d.generation DESC LIMIT 1`,
    [node],
  );
  // Nothing sent since it enrolled: its overlay is on its way from the enrolment, or is sent by
  // sendMissingOverlays at start; sending it here too would only race them.
  if (latest === undefined) return { consumer, republished: false };
  const wrong = await judgeSlot(ctx, manager, node, latest);
  if (wrong === undefined) return { consumer, republished: false };
  const sent = state.release_generation !== null ? await sendDeclaration(ctx, node, 'final') : await sendCurrent(ctx, node);
  if (sent === undefined) return { consumer, republished: false };
  objects.repairs.record({ kind: 'slot_republished', subject: `node ${node}`, detail: `${wrong}; its ${sent.kind} declaration was sent again as generation ${sent.generation}`, at: ctx.now() });
  return { consumer, republished: true };
}

/** What is wrong with the node's slot, or undefined when it holds the latest declaration sent. */
async function judgeSlot(ctx: ControllerContext, manager: JetStreamManager, node: string, latest: LatestSent): Promise<string | undefined> {
  const slot = await manager.streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject(node) });
  const expected = `generation ${latest.generation} was the latest sent`;
  if (slot === null) return `its slot on the stream was empty (${expected})`;
  let opened;
  try {
    opened = openEnvelopeWithDigest(slot.json(), ctx.config.controller.public_key, Declaration);
  } catch (error) {
    return `its slot held something that does not verify as this mesh's declaration (${error instanceof Error ? error.message : String(error)})`;
  }
  const { generation, node: addressed } = opened.value;
  if (addressed !== node) return `its slot held a declaration addressed to node ${addressed}`;
  if (generation !== latest.generation) return `its slot held generation ${generation}, and ${expected}`;
  if (opened.digest !== latest.digest) return `its slot held a generation ${generation} that is not the one recorded as sent`;
  return undefined;
}
