import { NodeNotFound } from './node-not-found';
import type { Sql, SqlStore } from './sql-store';

/** A token as the store keeps it, without its secret hash (see migrations/0002_tokens.sql). */
export interface TokenRecord {
  id: string;
  /** The node record it enrols into; null for `--new`. */
  for_node: string | null;
  /** The broker user (nkey) revoked when it was issued, if the node had one. */
  revoked_identity: string | null;
  issued_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

/** What `mesh-control token issue` asks the store to keep. */
export interface IssueTokenRequest {
  /** The token id: 16 lowercase hex digits (generateTokenCredentials). */
  id: string;
  /** tokenSecretHash(secret); the secret itself is never stored. */
  secret_hash: string;
  /** `--node NAME`: the existing record to enrol into; null for `--new`. */
  for_node: string | null;
  issued_at: Date;
  expires_at: Date;
}

/**
 * Why a token was not consumed. `unknown`: no token has this id; `wrong_secret`: the secret does
 * not match; `already_used`: it was consumed before; `expired`: its time ran out unused. A
 * wrong secret is said before anything else, so a caller without the secret learns nothing of
 * the token's state.
 */
export type TokenRefusal = 'unknown' | 'wrong_secret' | 'already_used' | 'expired';

/** The outcome of {@link consumeToken}. */
export type ConsumeTokenResult =
  | { ok: true; token: TokenRecord }
  | { ok: false; reason: 'unknown' | 'wrong_secret' }
  | { ok: false; reason: 'already_used' | 'expired'; token: TokenRecord };

const COLUMNS = 'id, for_node, revoked_identity, issued_at, expires_at, consumed_at';

/**
 * Keeps a new token. For `--node NAME` it revokes the node's identity in the same transaction:
 * the node row is locked (SELECT … FOR UPDATE), its key and broker user cleared (an enrolled or
 * disconnected node becomes `revoked`), the revoked broker user recorded on the token, for
 * the caller to remove from the broker, and the key recorded dead (dead_node_keys). Throws NodeNotFound for a name with no record.
 */
export async function issueToken(store: Pick<SqlStore, 'transaction'>, request: IssueTokenRequest): Promise<TokenRecord> {
  return store.transaction(async (tx) => {
    let revoked: string | null = null;
    if (request.for_node !== null) {
      const [node] = await tx.query<{ nkey: string | null; public_key: string | null }>('SELECT nkey, public_key FROM nodes WHERE name = $1 FOR UPDATE', [request.for_node]);
      if (node === undefined) throw new NodeNotFound(request.for_node);
      revoked = node.nkey;
      // The key it replaces is dead: never sealed to again, refused if presented at enrolment.
      if (node.public_key !== null && node.nkey !== null) {
        await tx.query(
          `INSERT INTO dead_node_keys (public_key, nkey, node, died_at, reason) VALUES ($1, $2, $3, $4, 'reissued') ON CONFLICT DO NOTHING`,
          [node.public_key, node.nkey, request.for_node, request.issued_at],
        );
      }
      await tx.query(
        `UPDATE nodes SET public_key = NULL, nkey = NULL, updated_at = $2,
           lifecycle_state = CASE WHEN lifecycle_state IN ('enrolled', 'disconnected') THEN 'revoked' ELSE lifecycle_state END
         WHERE name = $1`,
        [request.for_node, request.issued_at],
      );
    }
    const [token] = await tx.query<TokenRecord>(
      `INSERT INTO tokens (id, secret_hash, for_node, revoked_identity, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [request.id, request.secret_hash, request.for_node, revoked, request.issued_at, request.expires_at],
    );
    return token as TokenRecord;
  });
}

/**
 * Uses the token once. The use is one conditional UPDATE (right secret, not consumed, not
 * expired at `now`), so of any number of concurrent attempts exactly one succeeds, on PGlite
 * and on PostgreSQL alike; the others then read the token to say why they were refused.
 */
export async function consumeToken(sql: Sql, id: string, secretHash: string, now: Date): Promise<ConsumeTokenResult> {
  const [consumed] = await sql.query<TokenRecord>(
    `UPDATE tokens SET consumed_at = $3
     WHERE id = $1 AND secret_hash = $2 AND consumed_at IS NULL AND expires_at > $3
     RETURNING ${COLUMNS}`,
    [id, secretHash, now],
  );
  if (consumed !== undefined) return { ok: true, token: consumed };

  const [row] = await sql.query<TokenRecord & { secret_hash: string }>(`SELECT ${COLUMNS}, secret_hash FROM tokens WHERE id = $1`, [id]);
  if (row === undefined) return { ok: false, reason: 'unknown' };
  const { secret_hash: stored, ...token } = row;
  if (stored !== secretHash) return { ok: false, reason: 'wrong_secret' };
  if (token.consumed_at !== null) return { ok: false, reason: 'already_used', token };
  if (token.expires_at.getTime() <= now.getTime()) return { ok: false, reason: 'expired', token };
  // Each condition only ever turns false for good (a use is never undone once committed), so a
  // refused UPDATE always leaves one of them false for the read after it.
  throw new Error(`token ${id} was refused although it reads as usable; the store changed under the UPDATE`);
}

/** The token's record, without its secret hash; undefined when there is none. */
export async function getToken(sql: Sql, id: string): Promise<TokenRecord | undefined> {
  const [row] = await sql.query<TokenRecord>(`SELECT ${COLUMNS} FROM tokens WHERE id = $1`, [id]);
  return row;
}
