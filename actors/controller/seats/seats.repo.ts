import type { ModuleSeats } from '../../../schema/seat';
import { KNOWN_SEATS } from '../../../schema/seat';
import type { Sql } from '../store/sql-store';

/** One way a node holds a seat: by hand (`module` null) or through a module it runs. */
export interface SeatHolding {
  seat: string;
  node: string;
  /** The module whose assigned revision holds it; null for a holder added by hand. */
  module: string | null;
}

/** A module on a node whose assigned revision needs a seat. */
export interface SeatNeed {
  seat: string;
  module: string;
  node: string;
}

/** Records the seats a module revision holds and needs (module_seat_claims), with the revision. */
export async function recordSeatClaims(sql: Sql, module: string, version: string, seats: ModuleSeats | undefined): Promise<void> {
  if (seats === undefined) return;
  for (const claim of ['holds', 'needs'] as const) {
    for (const seat of new Set(seats[claim])) {
      await sql.query('INSERT INTO module_seat_claims (module, version, seat, claim) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [module, version, seat, claim]);
    }
  }
}

/** The seats one module revision holds and needs. */
export async function seatClaimsOf(sql: Sql, module: string, version: string): Promise<ModuleSeats> {
  const rows = await sql.query<{ seat: string; claim: 'holds' | 'needs' }>('SELECT seat, claim FROM module_seat_claims WHERE module = $1 AND version = $2 ORDER BY seat', [module, version]);
  return { holds: rows.filter((row) => row.claim === 'holds').map((row) => row.seat), needs: rows.filter((row) => row.claim === 'needs').map((row) => row.seat) };
}

/** Every holding of every seat (or of `seat`), by seat, node, then module (hand first). */
export function seatHoldings(sql: Sql, seat?: string): Promise<SeatHolding[]> {
  return sql.query<SeatHolding>(
    `SELECT seat, node, module FROM (
       SELECT seat, node, NULL::text AS module FROM seat_holders
       UNION
       SELECT c.seat, a.node, a.module FROM module_assignments a
         JOIN module_seat_claims c ON c.module = a.module AND c.version = a.version AND c.claim = 'holds'
     ) h WHERE $1::text IS NULL OR seat = $1::text
     ORDER BY seat, node, module NULLS FIRST`,
    [seat ?? null],
  );
}

/** Every module on a node whose revision needs a seat (or `seat`), by seat, module, node. */
export function seatNeeds(sql: Sql, seat?: string): Promise<SeatNeed[]> {
  return sql.query<SeatNeed>(
    `SELECT c.seat, a.module, a.node FROM module_assignments a
       JOIN module_seat_claims c ON c.module = a.module AND c.version = a.version AND c.claim = 'needs'
     WHERE $1::text IS NULL OR c.seat = $1::text
     ORDER BY c.seat, a.module, a.node`,
    [seat ?? null],
  );
}

/** Every seat an operator set the holding of, with whether it is replicated. */
export function seatSettings(sql: Sql): Promise<Array<{ name: string; replicated: boolean }>> {
  return sql.query<{ name: string; replicated: boolean }>('SELECT name, replicated FROM seats ORDER BY name');
}

/** Whether `seat` is replicated: as an operator set it, else as the controller knows it, else not. */
export async function isReplicated(sql: Sql, seat: string): Promise<boolean> {
  const [row] = await sql.query<{ replicated: boolean }>('SELECT replicated FROM seats WHERE name = $1', [seat]);
  return row?.replicated ?? KNOWN_SEATS[seat]?.replicated ?? false;
}

/** Sets whether `seat` is replicated. */
export async function setReplicated(sql: Sql, seat: string, replicated: boolean, at: Date): Promise<void> {
  await sql.query(
    'INSERT INTO seats (name, replicated, changed_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET replicated = excluded.replicated, changed_at = excluded.changed_at',
    [seat, replicated, at],
  );
}

/** Records `node` as a holder of `seat` by hand. True when it was not one already. */
export async function addHolder(sql: Sql, seat: string, node: string, at: Date): Promise<boolean> {
  const rows = await sql.query('INSERT INTO seat_holders (seat, node, added_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING node', [seat, node, at]);
  return rows.length > 0;
}

/** Forgets `node` as a holder of `seat` by hand. True when it was one. */
export async function removeHolder(sql: Sql, seat: string, node: string): Promise<boolean> {
  const rows = await sql.query('DELETE FROM seat_holders WHERE seat = $1 AND node = $2 RETURNING node', [seat, node]);
  return rows.length > 0;
}
