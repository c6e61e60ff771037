import type { ControllerContext } from '../controller-context';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refreshPeers } from '../declarations/send-current';
import { itemsSealedToDeadNkey } from '../secrets/secrets.repo';
import { NodeNotFound } from '../store/node-not-found';
import { NodeNotRevocable } from './revoke-errors';
import { seatsLostWith, type SeatWithoutHolder } from '../seats/seats-left-without-holder';
import { seatsLeftLines } from './seats-left-lines';

/** One credential the mesh issued for a node, and what became of it. */
export interface IssuedCredential {
  /**
   * `broker_user` (its nkey), `overlay_key` (its WireGuard public key), `token` (an enrolment
   * token's id), `sealed_secret` (a secret sealed to its key: "module/name version N for PATH").
   */
  kind: 'broker_user' | 'overlay_key' | 'token' | 'sealed_secret';
  id: string;
  /** What it is now: `removed`, `dropped`, `used`, `expired`, `revoked`; `unsealable`: nothing is sealed to the dead key again. */
  state: 'removed' | 'dropped' | 'used' | 'expired' | 'revoked' | 'unsealable';
  detail: string;
}

/** What `node.revoke` did. */
export interface RevokeOutcome {
  node: string;
  revoked_at: string;
  why: string | null;
  /** Every credential the mesh issued for the node, as it stands after the revocation. */
  credentials: IssuedCredential[];
  /** What the mesh does not issue, said so that no one looks for it. */
  not_issued: string;
  /**
   * The seats it was the last holder of on the mesh that something still needs: an emergency is
   * not refused for them, so they are said here, and `status` names them until one is added.
   */
  seats_left_without_holder: SeatWithoutHolder[];
}

interface NodeRow {
  lifecycle_state: string;
  nkey: string | null;
  public_key: string | null;
  wireguard_public_key: string | null;
  revoked_at: Date | string | null;
  updated_at: Date | string;
}

interface TokenRow {
  id: string;
  issued_at: Date | string;
  expires_at: Date | string;
  consumed_at: Date | string | null;
  consumed_by: string | null;
  for_node: string | null;
}

/** Said with every revocation: today the mesh issues a node nothing beyond what is listed. */
export const NOT_ISSUED = 'nothing else: the mesh issues nodes no certificates';

/**
 * Revokes a gone node (stolen, dead): in one transaction its identity is cleared and it is
 * marked revoked (when, why, which broker user), and every enrolment token still open for it is
 * ended, so no one can enrol as it with a token issued before; then its broker user and those
 * tokens' users are removed, which drops its live connection at the broker's reload, and its
 * peers are sent an overlay without it (a revoked node is not a peer). The record stays.
 *
 * Throws NodeNotFound for a name with no record and NodeNotRevocable for one revoked or
 * released already.
 */
export async function revokeNode(ctx: ControllerContext, node: string, why: string | null): Promise<RevokeOutcome> {
  const now = ctx.now();
  // Read while the node is still on the mesh; a revocation is never refused for it.
  const seatsLeft = await seatsLostWith(ctx.store, node);
  const outcome = await nodeWorkQueue(ctx).run(node, async () => {
    const found = await ctx.store.transaction(async (tx) => {
      const [row] = await tx.query<NodeRow>('SELECT lifecycle_state, nkey, public_key, wireguard_public_key, revoked_at, updated_at FROM nodes WHERE name = $1 FOR UPDATE', [node]);
      if (row === undefined) throw new NodeNotFound(node, 'list the nodes with `mesh-control nodes`, and give a name as it is listed there');
      if (row.lifecycle_state === 'revoked' || row.lifecycle_state === 'released') {
        throw new NodeNotRevocable(node, row.lifecycle_state, dateOrNull(row.lifecycle_state === 'revoked' ? row.revoked_at ?? row.updated_at : row.updated_at));
      }
      await tx.query(
        `UPDATE nodes SET lifecycle_state = 'revoked', public_key = NULL, nkey = NULL, revoked_at = $2, revoked_why = $3, revoked_nkey = $4, updated_at = $2
         WHERE name = $1`,
        [node, now, why, row.nkey],
      );
      if (row.public_key !== null && row.nkey !== null) {
        await tx.query(
          `INSERT INTO dead_node_keys (public_key, nkey, node, died_at, reason) VALUES ($1, $2, $3, $4, 'revoked') ON CONFLICT DO NOTHING`,
          [row.public_key, row.nkey, node, now],
        );
      }
      const ended = await tx.query<{ id: string }>(
        // Ended by expiring now (a token issued this very millisecond, the next: a token cannot
        // expire before it was issued).
        `UPDATE tokens SET expires_at = GREATEST($2, issued_at + interval '1 millisecond')
         WHERE for_node = $1 AND consumed_at IS NULL AND expires_at > $2 RETURNING id`,
        [node, now],
      );
      const tokens = await tx.query<TokenRow>(
        'SELECT id, issued_at, expires_at, consumed_at, consumed_by, for_node FROM tokens WHERE for_node = $1 OR consumed_by = $1 ORDER BY issued_at, id',
        [node],
      );
      return { row, ended: new Set(ended.map((token) => token.id)), tokens };
    });
    // Also when the store held no key: a user left by an issue that stopped half way goes too.
    await ctx.broker.removeNode(node);
    for (const id of found.ended) await ctx.broker.removeEnrolment(id);
    return found;
  });
  ctx.log(`node ${node} revoked${why === null ? '' : ` (${why})`}: broker user ${outcome.row.nkey ?? '(none held)'} removed, ${outcome.ended.size} open token(s) ended`, { level: 'warn', node });
  if (seatsLeft.length > 0) ctx.log(`node ${node} revoked: seat(s) ${seatsLeft.map((entry) => entry.seat).join(', ')} left without a holder on the mesh`, { level: 'warn', node });
  await refreshPeers(ctx, node);

  const credentials: IssuedCredential[] = [];
  if (outcome.row.nkey !== null) {
    credentials.push({ kind: 'broker_user', id: outcome.row.nkey, state: 'removed', detail: 'its broker user (nkey): removed, and its connection dropped' });
  }
  if (outcome.row.wireguard_public_key !== null) {
    credentials.push({ kind: 'overlay_key', id: outcome.row.wireguard_public_key, state: 'dropped', detail: 'its overlay (WireGuard) key: its peers are sent an overlay without it' });
  }
  if (outcome.row.nkey !== null) {
    for (const item of await itemsSealedToDeadNkey(ctx.store, outcome.row.nkey)) {
      credentials.push({ kind: 'sealed_secret', id: item, state: 'unsealable', detail: `secret ${item}: sealed to its dead key; the mesh can no longer seal to it until it enrols again` });
    }
  }
  for (const token of outcome.tokens) {
    const state = outcome.ended.has(token.id) ? 'revoked' : token.consumed_at !== null ? 'used' : 'expired';
    const used = token.consumed_at === null ? '' : `, used ${new Date(token.consumed_at).toISOString()}`;
    const detail = state === 'revoked'
      ? `enrolment token issued ${new Date(token.issued_at).toISOString()}: was still open, ended now (its broker user removed)`
      : `enrolment token issued ${new Date(token.issued_at).toISOString()}${used}: ${state === 'used' ? 'used, so it admits no one' : 'expired'}`;
    credentials.push({ kind: 'token', id: token.id, state, detail });
  }
  return { node, revoked_at: now.toISOString(), why, credentials, not_issued: NOT_ISSUED, seats_left_without_holder: seatsLeft };
}

/** The text `mesh-control node revoke` prints. */
export function formatRevocation(outcome: RevokeOutcome): string {
  return [
    `node ${outcome.node} revoked at ${outcome.revoked_at}${outcome.why === null ? '' : ` (${outcome.why})`}: it can no longer reach the broker.`,
    'Credentials the mesh issued for it:',
    ...(outcome.credentials.length === 0 ? ['  (none)'] : outcome.credentials.map((c) => `  ${c.kind} ${c.id}: ${c.detail}`)),
    `  and ${outcome.not_issued}.`,
    `Its host lets go of its store once the broker has refused it; to bring the machine back, mesh-control token issue --node ${outcome.node} and nox-mesh-host enrol --token …; to retire the record, mesh-control node release ${outcome.node}.`,
    ...seatsLeftLines(outcome.seats_left_without_holder ?? []),
  ].join('\n');
}

function dateOrNull(value: Date | string | null): Date | null {
  return value === null ? null : new Date(value);
}
