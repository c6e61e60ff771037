import type { Sql } from '../store/sql-store';

/**
 * The epoch this controller acts under, for now: the floor in `controller_epoch` plus one,
 * written back in the same statement, so every start acts under an epoch higher than any before
 * it and two controllers starting together never share one.
 *
 * TODO(lease): the lease (issue "The controller as a supervised actor system") replaces this:
 * the epoch becomes the KV revision the lease was taken at, raised above this floor first. Until
 * then nothing stops two serving controllers from both acting.
 */
export async function takeEpoch(sql: Sql, holder: string, now: Date): Promise<number> {
  const [row] = await sql.query<{ epoch: number }>(
    `INSERT INTO controller_epoch (singleton, epoch, holder, raised_at) VALUES (true, 1, $1, $2)
     ON CONFLICT (singleton) DO UPDATE SET epoch = controller_epoch.epoch + 1, holder = excluded.holder, raised_at = excluded.raised_at
     RETURNING epoch`,
    [holder, now],
  );
  return Number(row?.epoch);
}
