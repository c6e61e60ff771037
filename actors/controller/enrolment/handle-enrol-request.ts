import { EnrolRequest, type EnrolReply } from '../../../schema/enrolment';
import { enrolmentSubject } from '../../shared/bus/subjects';
import { nkeyPublicOf } from '../../shared/crypto/nkey';
import type { ControllerContext } from '../controller-context';
import { openNodeConsumer } from '../declarations/declaration-stream';
import { enrolInStore } from './enrol-in-store';
import { enrolProofHolds } from './enrol-proof';
import { enrolRefusalReply } from './enrol-refusal-reply';
import { overlayPool } from './overlay-pool';

/** What became of one enrolment request: the answer to send, and the node it made, if any. */
export interface EnrolHandled {
  reply: EnrolReply;
  /** The token id the request came with (from its subject). */
  token_id: string;
  /** Set when the machine is now a node; `nkey` is the broker user it connects as. */
  enrolled?: { node: string; nkey: string; again: boolean; reenrolled: boolean };
}

/**
 * Decides one enrolment request, as it arrived on `mesh.enrol.<token id>`: the request is read
 * against the contract and must name the token of its subject; its nkey must be its identity
 * key's; its proof must be that key's signature; then the token is used and the node recorded
 * (enrolInStore), and the node's durable consumer made, so its declarations have somewhere to
 * wait. Nothing is sent to the machine and the broker's users are not changed here: the caller
 * answers, then adds the node's user (a reload, which must not come between a request and its
 * answer: see AnswersInHand).
 *
 * A request that fails after the token was used is answered `unavailable`; the machine asking
 * again with the same token and the same keys finishes the enrolment.
 */
export async function handleEnrolRequest(ctx: ControllerContext, subject: string, data: Uint8Array): Promise<EnrolHandled> {
  const tokenId = subject.slice(enrolmentSubject('').length);
  const refused = (refusal: Parameters<typeof enrolRefusalReply>[0], detail?: string): EnrolHandled => ({ reply: enrolRefusalReply(refusal, detail), token_id: tokenId });

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return refused('malformed', 'it is not JSON');
  }
  const parsed = EnrolRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return refused('malformed', `${issue?.path.join('.') || 'the request'}: ${issue?.message ?? 'does not match the contract'}`);
  }
  const request = parsed.data;
  if (request.token_id !== tokenId) return refused('malformed', `it names token ${request.token_id} but came on the subject of token ${tokenId}`);
  if (request.nkey_public !== nkeyPublicOf(request.public_key)) return refused('malformed', 'its broker nkey is not the nkey of its identity key');
  // Checked over the request as it came, not as parsed: the signature covers the host's bytes.
  if (!enrolProofHolds(json as EnrolRequest)) return refused('proof_invalid');

  let decision;
  try {
    decision = await enrolInStore(ctx.store, request, overlayPool(ctx.config.overlay.cidr), ctx.now());
  } catch (error) {
    ctx.log(`enrolment with token ${tokenId} failed in the store: ${describe(error)}`, { level: 'error', token: tokenId });
    return refused('unavailable', 'its records could not be written; the token was not used');
  }
  if (!decision.ok) {
    ctx.log(`enrolment with token ${tokenId} refused: ${decision.refusal} (${decision.detail})`, { level: 'warn', token: tokenId, refusal: decision.refusal });
    return refused(decision.refusal, decision.detail);
  }

  try {
    await openNodeConsumer(ctx.nc, decision.node, { fresh: !decision.again || !(await sentSinceEnrolment(ctx, decision.node)) });
  } catch (error) {
    ctx.log(`enrolment of node ${decision.node} with token ${tokenId}: its queue could not be made on the broker: ${describe(error)}`, { level: 'error', node: decision.node, token: tokenId });
    return refused('unavailable', 'the node\'s queue could not be made on the broker; enrolling again with the same token finishes it');
  }
  ctx.log(
    decision.again
      ? `node ${decision.node} asked again with token ${tokenId}: told its name again`
      : `node ${decision.node} enrolled${decision.reenrolled ? ' again (re-enrolment)' : ''} with token ${tokenId}, overlay address ${decision.overlay_address}`,
    { node: decision.node, token: tokenId },
  );
  return { reply: { ok: true, node: decision.node }, token_id: tokenId, enrolled: { node: decision.node, nkey: request.nkey_public, again: decision.again, reenrolled: decision.reenrolled } };
}

async function sentSinceEnrolment(ctx: ControllerContext, node: string): Promise<boolean> {
  const rows = await ctx.store.query(
    'SELECT 1 FROM declarations d JOIN nodes n ON n.name = d.node WHERE d.node = $1 AND d.sent_at >= n.enrolled_at LIMIT 1',
    [node],
  );
  return rows.length > 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
