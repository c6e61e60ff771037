import type { EnrolRefusal, EnrolRequest } from '../../../schema/enrolment';
import { tokenSecretHash } from '../../shared/crypto/token';
import type { Sql, SqlStore } from '../store/sql-store';
import { consumeToken, type TokenRecord } from '../store/tokens.repo';
import { nodeNameFromHostname, uniqueNodeName } from './node-name-from-hostname';
import { firstFreeAddress, poolHolds, type OverlayPool } from './overlay-pool';

/** What the store decided about an enrolment request whose proof already checked out. */
export type EnrolDecision =
  | {
      ok: true;
      /** The node the machine now is. */
      node: string;
      /** True when this token was already used by this very identity (its answer was lost): nothing new was recorded. */
      again: boolean;
      /** True when the token named an existing record (re-enrolment). */
      reenrolled: boolean;
      overlay_address: string;
    }
  | { ok: false; refusal: EnrolRefusal; detail: string };

// pg_advisory_xact_lock(key1, key2): 'novx' as an int4, then 30 for "node names and addresses".
const ALLOCATION_LOCK = 'SELECT pg_advisory_xact_lock(1852798584, 30)';

/**
 * Uses the token and records the machine as a node, in one transaction: either the token is
 * spent and the node recorded with its keys, its profile and an overlay address, or neither.
 *
 * The token is used by one conditional UPDATE (consumeToken), so of any number of requests
 * racing with one token exactly one gets past it. The name and the address are then chosen
 * under one advisory lock, so two machines enrolling at once never get the same of either.
 * A token for a node record (`--node`) makes the machine that node again: its keys are
 * replaced (the old identity was revoked at issue), its address kept, the copy of what it
 * owned set aside to hand back with its next full declaration, and its report accounts
 * started again (the old identity's reports are dropped).
 */
export async function enrolInStore(store: Pick<SqlStore, 'transaction'>, request: EnrolRequest, pool: OverlayPool, now: Date): Promise<EnrolDecision> {
  try {
    return await decide(store, request, pool, now);
  } catch (error) {
    if (error instanceof RefusedAfterUse) return error.decision;
    throw error;
  }
}

/**
 * A refusal found after the token was used in the transaction: thrown, so the transaction rolls
 * back and the token stays usable for a request that can succeed.
 */
class RefusedAfterUse extends Error {
  readonly decision: EnrolDecision;
  constructor(decision: EnrolDecision) {
    super('refused after the token was used; rolled back');
    this.decision = decision;
  }
}

function decide(store: Pick<SqlStore, 'transaction'>, request: EnrolRequest, pool: OverlayPool, now: Date): Promise<EnrolDecision> {
  return store.transaction(async (tx) => {
    const used = await consumeToken(tx, request.token_id, tokenSecretHash(request.secret), now);
    if (!used.ok) {
      switch (used.reason) {
        case 'unknown':
          return refuse('token_unknown', `no token has the id ${request.token_id}`);
        case 'wrong_secret':
          return refuse('token_secret_wrong', `the secret does not match token ${request.token_id}`);
        case 'expired':
          return refuse('token_expired', `token ${request.token_id} expired at ${used.token.expires_at.toISOString()}`);
        case 'already_used':
          return (await sameMachineAgain(tx, used.token, request)) ?? refuse('token_used', `token ${request.token_id} was used at ${used.token.consumed_at?.toISOString() ?? 'an earlier time'}`);
      }
    }
    await tx.query(ALLOCATION_LOCK);
    const clash = await identityClash(tx, request, used.token.for_node);
    if (clash !== undefined) throw new RefusedAfterUse(refuse('malformed', clash));

    const existing = used.token.for_node === null ? undefined : await nodeRow(tx, used.token.for_node);
    const name = existing?.name ?? (await freeName(tx, nodeNameFromHostname(request.hostname)));
    const address = existing?.overlay_address !== null && existing?.overlay_address !== undefined && poolHolds(pool, existing.overlay_address)
      ? existing.overlay_address
      : firstFreeAddress(pool, await takenAddresses(tx));
    if (address === undefined) throw new RefusedAfterUse(refuse('unavailable', `the overlay pool ${pool.cidr} has no free address left`));

    const values = [
      name, request.public_key, request.nkey_public, request.wireguard_public_key, address,
      JSON.stringify(request.profile), JSON.stringify(request.inventory), request.version_running, now,
    ];
    if (existing === undefined) {
      await tx.query(
        `INSERT INTO nodes (name, lifecycle_state, public_key, nkey, wireguard_public_key, overlay_address, profile, inventory, version_running,
                            last_seen_at, enrolled_at, created_at, updated_at)
         VALUES ($1, 'enrolled', $2, $3, $4, $5, $6, $7, $8, $9, $9, $9, $9)`,
        values,
      );
    } else {
      await tx.query(
        `UPDATE nodes SET lifecycle_state = 'enrolled', public_key = $2, nkey = $3, wireguard_public_key = $4, overlay_address = $5,
                profile = $6, inventory = $7, version_running = $8, last_seen_at = GREATEST(last_seen_at, $9), enrolled_at = $9, updated_at = $9,
                previously_owned = COALESCE(owned, previously_owned),
                overlay_applied_generation = NULL, full_held = NULL, release_generation = NULL, release_held = NULL
         WHERE name = $1`,
        values,
      );
      // The accounts start again with the new identity: a machine that lost its store counts
      // its reports from zero, and against the old identity's every one would be "older" (or
      // take the place of an old one). What the node owned is kept above, in previously_owned.
      await tx.query('DELETE FROM reports WHERE node = $1', [name]);
    }
    await tx.query('UPDATE tokens SET consumed_by = $2 WHERE id = $1', [request.token_id, name]);
    return { ok: true, node: name, again: false, reenrolled: existing !== undefined, overlay_address: address } as const;
  });
}

function refuse(refusal: EnrolRefusal, detail: string): EnrolDecision {
  return { ok: false, refusal, detail };
}

/**
 * A used token presented again by the identity it enrolled: the machine asked again because
 * its answer never came. It is told the same name; everything else was done the first time.
 */
async function sameMachineAgain(tx: Sql, token: TokenRecord, request: EnrolRequest): Promise<EnrolDecision | undefined> {
  const [row] = await tx.query<{ name: string; overlay_address: string | null }>(
    `SELECT n.name, n.overlay_address FROM tokens t JOIN nodes n ON n.name = t.consumed_by
     WHERE t.id = $1 AND n.public_key = $2 AND n.nkey = $3 AND n.wireguard_public_key = $4 AND n.lifecycle_state IN ('enrolled', 'disconnected')`,
    [token.id, request.public_key, request.nkey_public, request.wireguard_public_key],
  );
  if (row === undefined || row.overlay_address === null) return undefined;
  return { ok: true, node: row.name, again: true, reenrolled: token.for_node !== null, overlay_address: row.overlay_address };
}

/** Says which node already holds one of the machine's keys, if another does. */
async function identityClash(tx: Sql, request: EnrolRequest, forNode: string | null): Promise<string | undefined> {
  // A key once replaced or revoked is dead for good: whoever presents it may hold a lost or
  // stolen machine's key.
  const [dead] = await tx.query<{ node: string; reason: string }>('SELECT node, reason FROM dead_node_keys WHERE public_key = $1 OR nkey = $2 LIMIT 1', [request.public_key, request.nkey_public]);
  if (dead !== undefined) {
    return `the machine presents a key of node ${dead.node} that is dead (${dead.reason === 'revoked' ? 'revoked' : 'replaced when a token was issued for the node'}); enrol with keys made afresh (nox-mesh-host enrol makes new ones)`;
  }
  const [row] = await tx.query<{ name: string }>(
    'SELECT name FROM nodes WHERE (public_key = $1 OR nkey = $2 OR wireguard_public_key = $3) AND name IS DISTINCT FROM $4 LIMIT 1',
    [request.public_key, request.nkey_public, request.wireguard_public_key, forNode],
  );
  return row === undefined ? undefined : `the machine presents keys node ${row.name} already holds; a machine enrols with keys of its own`;
}

async function nodeRow(tx: Sql, name: string): Promise<{ name: string; overlay_address: string | null } | undefined> {
  const [row] = await tx.query<{ name: string; overlay_address: string | null }>('SELECT name, overlay_address FROM nodes WHERE name = $1 FOR UPDATE', [name]);
  return row;
}

async function freeName(tx: Sql, base: string): Promise<string> {
  // Every candidate starts with the base's first 40 characters (a long base is shortened for
  // its suffix, never that far), and a label holds neither `%` nor `_`.
  const rows = await tx.query<{ name: string }>("SELECT name FROM nodes WHERE name LIKE $1 || '%'", [base.slice(0, 40)]);
  const taken = new Set(rows.map((row) => row.name));
  return uniqueNodeName(base, (name) => taken.has(name));
}

async function takenAddresses(tx: Sql): Promise<string[]> {
  const rows = await tx.query<{ overlay_address: string }>('SELECT overlay_address FROM nodes WHERE overlay_address IS NOT NULL');
  return rows.map((row) => row.overlay_address);
}
