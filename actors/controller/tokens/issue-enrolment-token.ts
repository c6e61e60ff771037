import { brokerPasswordFor, encodeToken, generateTokenCredentials, tokenSecretHash } from '../../shared/crypto';
import type { ControllerContext } from '../controller-context';
import { itemsSealedToDeadNkey } from '../secrets/secrets.repo';
import { issueToken } from '../store/tokens.repo';
import { brokerUrlsOf } from '../config/broker-urls';

/** What to issue: for an existing node record (re-enrolment) or for a new machine, and for how long. */
export interface IssueEnrolmentTokenRequest {
  /** The node record the token enrols into; null for a machine the mesh has not seen. */
  forNode: string | null;
  ttlMs: number;
}

/** A token just issued. `token` is the text the person carries; it is shown once and kept nowhere. */
export interface IssuedToken {
  token: string;
  token_id: string;
  for_node: string | null;
  issued_at: string;
  expires_at: string;
  /** The node's broker user (nkey) revoked at issue, when it had one. */
  revoked_identity: string | null;
  /**
   * With a revoked identity: its key is dead, and this is what the mesh can no longer seal to
   * it: `sealed`, each secret sealed to that key, item by item ("web/db-password version 2 for
   * /etc/app/db-password"), and `waiting`, the declarations sent that the node never reported
   * taking. It gets its current ones again, sealed to its new key, once it has enrolled.
   */
  cannot_seal_to?: { dead_key: string; sealed: string[]; waiting: Array<{ generation: number; kind: string; sent_at: string }> };
}

/**
 * Issues an enrolment token. The store keeps the token with its secret hashed and its expiry;
 * for `forNode` it revokes the node's identity in the same transaction (issueToken), and the
 * node's broker user is then removed, which closes its live connection at the broker's reload:
 * two live identities for one node is the stolen-laptop case. Then the token's own broker user
 * `enrol-<id>` is added, with a password derived from the secret, so the machine can reach the
 * broker before it has an identity. The secret is never logged.
 */
export async function issueEnrolmentToken(
  ctx: Pick<ControllerContext, 'config' | 'store' | 'broker' | 'now' | 'log'>,
  request: IssueEnrolmentTokenRequest,
): Promise<IssuedToken> {
  const credentials = generateTokenCredentials();
  const issuedAt = ctx.now();
  const expiresAt = new Date(issuedAt.getTime() + request.ttlMs);
  // A name with no record is refused by the store (NodeNotFound, which names --new).
  const record = await issueToken(ctx.store, {
    id: credentials.token_id,
    secret_hash: tokenSecretHash(credentials.secret),
    for_node: request.forNode,
    issued_at: issuedAt,
    expires_at: expiresAt,
  });
  if (request.forNode !== null) {
    // Also when the store held no identity: a broker user left by an earlier issue that
    // stopped half way is removed all the same.
    await ctx.broker.removeNode(request.forNode);
    if (record.revoked_identity !== null) ctx.log(`node ${request.forNode}: identity ${record.revoked_identity} revoked; its broker user is removed`, { level: 'warn', node: request.forNode });
  }
  const waiting = record.revoked_identity === null || request.forNode === null ? undefined : await waitingFor(ctx, request.forNode);
  const sealed = record.revoked_identity === null ? [] : await itemsSealedToDeadNkey(ctx.store, record.revoked_identity);
  await ctx.broker.addEnrolment(credentials.token_id, brokerPasswordFor(credentials.secret, credentials.token_id));
  ctx.log(`token ${credentials.token_id} issued ${request.forNode === null ? 'for a new machine' : `for node ${request.forNode}`}, expires ${expiresAt.toISOString()}`, { token: credentials.token_id });
  return {
    token: encodeToken({
      broker_url: ctx.config.broker.url,
      ...(ctx.config.broker.servers === undefined ? {} : { broker_urls: brokerUrlsOf(ctx.config) }),
      broker_fingerprint: ctx.config.broker.fingerprint,
      controller_public_key: ctx.config.controller.public_key,
      token_id: credentials.token_id,
      secret: credentials.secret,
    }),
    token_id: credentials.token_id,
    for_node: record.for_node,
    issued_at: record.issued_at.toISOString(),
    expires_at: record.expires_at.toISOString(),
    revoked_identity: record.revoked_identity,
    ...(waiting === undefined || record.revoked_identity === null ? {} : { cannot_seal_to: { dead_key: record.revoked_identity, sealed, waiting } }),
  };
}

/** The declarations sent to `node` after the last one it reported on: what it never took. */
async function waitingFor(ctx: Pick<ControllerContext, 'store'>, node: string): Promise<Array<{ generation: number; kind: string; sent_at: string }>> {
  const rows = await ctx.store.query<{ generation: string | number; kind: string; sent_at: Date | string }>(
    `SELECT generation, kind, sent_at FROM declarations
     WHERE node = $1 AND generation > COALESCE((SELECT max(generation) FROM reports WHERE node = $1), 0)
     ORDER BY generation`,
    [node],
  );
  return rows.map((row) => ({ generation: Number(row.generation), kind: row.kind, sent_at: new Date(row.sent_at).toISOString() }));
}
