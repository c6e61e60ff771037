import { jetstream } from '@nats-io/jetstream';
import { Declaration, type DeclarationKind } from '../../../schema/declaration';
import { parseContract } from '../../../schema/parse';
import { declarationSubject } from '../../shared/bus/subjects';
import { envelopeDigest, sealEnvelope } from '../../shared/crypto/envelope';
import type { ControllerContext } from '../controller-context';
import { meshTally } from '../metrics/mesh-tally';
import { NotActing } from '../lease/lease-errors';
import { fingerprintsToPin, readBrokerCertificates } from '../broker/broker-certificates';
import { busObjects } from './bus-objects';
import { DeclarationTooLargeForBroker } from './declaration-errors';
import { composeFull } from './compose-full';
import { composeOverlay, type ComposedDeclaration } from './compose-overlay';
import {
  allotGeneration,
  clearPreviouslyOwned,
  forgetDeclaration,
  getNodeDeclarationState,
  recordDeclaration,
  restorePreviouslyOwned,
  restoreRelease,
  startRelease,
} from './declarations.repo';

/** What was sent: enough to find it again in `declarations` and in the node's reports. */
export interface DeclarationSent {
  node: string;
  generation: number;
  epoch: number;
  kind: DeclarationKind;
  /** SHA-256 of the signed payload, as the node's reports quote it. */
  digest: string;
}

/**
 * Composes the node's declaration of `kind` as the mesh stands now and sends it: `overlay`
 * (the overlay alone), `full` (overlay and what was declared for the node) or `final` (naming
 * nothing: the node removes what it owns and leaves). Call it inside the node's work queue
 * (`nodeWorkQueue(ctx).run(node, …)`), so sends to one node never overlap.
 */
export async function sendDeclaration(ctx: ControllerContext, node: string, kind: DeclarationKind): Promise<DeclarationSent> {
  const composed: ComposedDeclaration =
    kind === 'overlay' ? await composeOverlay(ctx, node) : kind === 'full' ? await composeFull(ctx, node) : { kind: 'final', resources: [] };
  return sendComposed(ctx, node, composed);
}

/**
 * Gives a composed declaration the node's next generation and the acting epoch, signs it with
 * the controller's key, records it, and publishes it to the node's subject, where the stream
 * keeps it (the latest per node) until the node's consumer reads it — at once, or when a node
 * that was away comes back.
 *
 * It is recorded before it is published, since a quick node may report on it before the
 * publish returns; a publish that fails takes the record back, and so does a controller that
 * stopped acting meanwhile. Refused whole (NotActing) by a controller that is not acting: only
 * the holder of the lease sends, under the epoch it took the lease at. The generation is not given
 * back: a gap is harmless, a generation used twice would be refused by the node as not newer.
 */
export async function sendComposed(ctx: ControllerContext, node: string, composed: ComposedDeclaration): Promise<DeclarationSent> {
  // Only the acting controller sends: asked before anything is allotted or recorded, and again
  // just before the publish, since composing and recording take time the gate may run out in.
  const what = `send node ${node} its ${composed.kind} declaration`;
  ctx.lease?.assertActing(what);
  await assertBusObjects(ctx, node);
  const sentAt = ctx.now();
  const epoch = ctx.epoch();
  const before = composed.kind === 'final' ? await getNodeDeclarationState(ctx.store, node) : undefined;
  const brokerFingerprints = await brokerFingerprintsToSend(ctx);
  const { envelope, generation, digest } = await ctx.store.transaction(async (tx) => {
    const generation = await allotGeneration(tx, node);
    const payload = parseContract(
      Declaration,
      {
        node,
        epoch,
        generation,
        kind: composed.kind,
        issued_at: sentAt.toISOString(),
        resources: composed.resources,
        ...(composed.overlay === undefined ? {} : { overlay: composed.overlay }),
        ...(composed.previously_owned === undefined ? {} : { previously_owned: composed.previously_owned }),
        ...(composed.roster === undefined ? {} : { roster: composed.roster }),
        ...(brokerFingerprints === undefined ? {} : { broker_fingerprints: brokerFingerprints }),
        // Every declaration names a cluster's servers, so a host learns of a server added later.
        ...(ctx.config.broker.servers === undefined ? {} : { broker_urls: ctx.config.broker.servers }),
      },
      'declaration',
    );
    const envelope = sealEnvelope(payload, ctx.signingKey);
    const bytes = Buffer.byteLength(JSON.stringify(envelope));
    const maxPayload = ctx.nc.info?.max_payload;
    if (maxPayload !== undefined && bytes > maxPayload) throw new DeclarationTooLargeForBroker(node, bytes, maxPayload);
    const digest = envelopeDigest(envelope);
    await recordDeclaration(tx, { node, generation, epoch, kind: composed.kind, digest, sent_at: sentAt });
    if (composed.previously_owned !== undefined) await clearPreviouslyOwned(tx, node);
    if (composed.kind === 'final') await startRelease(tx, node, generation, sentAt);
    return { envelope, generation, digest };
  });
  try {
    ctx.lease?.assertActing(what);
    const publish = () => jetstream(ctx.nc).publish(declarationSubject(node), JSON.stringify(envelope), { msgID: `${node}:${generation}` });
    await publish().catch(async (error: unknown) => {
      // The stream may have gone since it was last asserted: asserted again, the publish is
      // tried once more (its message id makes a publish that did land count once).
      if (error instanceof NotActing) throw error;
      busObjects(ctx).forgetStream();
      busObjects(ctx).forget(node);
      if (!(await assertBusObjects(ctx, node))) throw error;
      ctx.lease?.assertActing(what);
      return publish();
    });
  } catch (error) {
    // Undo what the record said, so the node's state reads as before this send.
    await ctx.store
      .transaction(async (tx) => {
        await forgetDeclaration(tx, node, generation);
        if (composed.previously_owned !== undefined) await restorePreviouslyOwned(tx, node, composed.previously_owned);
        if (composed.kind === 'final') await restoreRelease(tx, node, before?.release_generation ?? null, before?.release_held ?? null);
      })
      .catch((undo: unknown) => ctx.log(`could not take back the record of node ${node}'s generation ${generation}: ${String(undo)}`, { level: 'error', node, generation }));
    throw error;
  }
  ctx.log(`sent node ${node} its ${composed.kind} declaration, generation ${generation} under epoch ${epoch} (${digest.slice(0, 12)})`, { node, generation, epoch, kind: composed.kind });
  meshTally(ctx).declarationSent(composed.kind);
  return { node, generation, epoch, kind: composed.kind, digest };
}

/**
 * The broker certificates every declaration pins (the current, and the next during a rotation),
 * read from the broker directory each time, so a rotation reaches every node with its next
 * declaration. Left out when they cannot be read (the node keeps the pins it has): said in the
 * log unless the broker directory is simply not on this machine.
 */
async function brokerFingerprintsToSend(ctx: ControllerContext): Promise<string[] | undefined> {
  try {
    return fingerprintsToPin(await readBrokerCertificates(ctx.config.broker.cert_file, ctx.config.broker.dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      ctx.log(`the broker certificate could not be read, so this declaration pins none (nodes keep the pins they have): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn' });
    }
    return undefined;
  }
}

/**
 * Asserts the stream and the node's consumer before a send (BusObjects). A failure is logged
 * and the send goes on: the objects are the mesh's, and holding one node's send back for them
 * would turn one fault into two; the next send, or the read-back, asserts them again. True when
 * the assertion held.
 */
async function assertBusObjects(ctx: ControllerContext, node: string): Promise<boolean> {
  try {
    await busObjects(ctx).assertForSend(node);
    return true;
  } catch (error) {
    busObjects(ctx).forget(node);
    ctx.log(`could not assert the declaration stream and node ${node}'s consumer before sending (the send goes on; the next send or read-back tries again): ${error instanceof Error ? error.message : String(error)}`, { level: 'warn', node });
    return false;
  }
}
