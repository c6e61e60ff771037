import type { ControllerLog } from '../logs/log-fields';
import type { BrokerUsers } from '../controller-context';
import type { Sql } from '../store/sql-store';

/** What the sweep needs: the store, the broker's user list, and somewhere to say what it did. */
export interface SweepDeps {
  store: Sql;
  broker: Pick<BrokerUsers, 'removeEnrolment'>;
  log: ControllerLog;
}

/** At most this many tokens per sweep, so a backlog cannot hold the broker in reloads for long. */
const BATCH = 200;

/**
 * Removes the broker users of tokens that have expired at `now`, used or not, and records each
 * removal on the token (migrations/0020), so a token's user never outlives the token and each
 * sweep reads only tokens still holding one. The user goes first and the record after: a sweep
 * cut short between the two removes an absent user next time, which changes nothing. Returns
 * the ids swept.
 */
export async function sweepExpiredTokens(deps: SweepDeps, now: Date): Promise<string[]> {
  const expired = await deps.store.query<{ id: string }>(
    'SELECT id FROM tokens WHERE broker_user_removed_at IS NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2',
    [now, BATCH],
  );
  const swept: string[] = [];
  for (const { id } of expired) {
    await deps.broker.removeEnrolment(id);
    await deps.store.query('UPDATE tokens SET broker_user_removed_at = $2 WHERE id = $1', [id, now]);
    swept.push(id);
  }
  if (swept.length > 0) deps.log(`tokens: ${swept.length} expired; their broker users are removed (${swept.join(', ')})`, { expired: swept.length });
  return swept;
}
