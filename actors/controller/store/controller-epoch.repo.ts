import type { Sql } from './sql-store';

/** The epoch floor as stored (see migrations/0005_controller_epoch.sql). */
export interface EpochFloor {
  epoch: number;
  /** The controller that raised it last. */
  holder: string;
  raised_at: Date;
}

/**
 * Raises the floor to `epoch` if that is higher, in one statement, so two controllers racing
 * cannot lower it. Returns the floor afterwards and whether this call raised it.
 */
export async function raiseEpochFloor(sql: Sql, epoch: number, holder: string, at: Date): Promise<{ floor: EpochFloor; raised: boolean }> {
  const [raised] = await sql.query<EpochFloor>(
    `INSERT INTO controller_epoch (singleton, epoch, holder, raised_at) VALUES (true, $1, $2, $3)
     ON CONFLICT (singleton) DO UPDATE SET epoch = excluded.epoch, holder = excluded.holder, raised_at = excluded.raised_at
       WHERE controller_epoch.epoch < excluded.epoch
     RETURNING epoch, holder, raised_at`,
    [epoch, holder, at],
  );
  if (raised !== undefined) return { floor: raised, raised: true };
  return { floor: (await readEpochFloor(sql)) as EpochFloor, raised: false };
}

/** The floor, or undefined before any controller has acted on this store. */
export async function readEpochFloor(sql: Sql): Promise<EpochFloor | undefined> {
  const [row] = await sql.query<EpochFloor>('SELECT epoch, holder, raised_at FROM controller_epoch');
  return row;
}
