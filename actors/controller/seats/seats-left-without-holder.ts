import type { StatusProblem } from '../../../schema/controller-status';
import type { Sql } from '../store/sql-store';
import { seatHoldings, seatNeeds } from './seats.repo';

/** A seat something on the mesh needs that no node on the mesh holds, and what needs it. */
export interface SeatWithoutHolder {
  seat: string;
  /** The modules on enrolled (or disconnected) nodes that need it. */
  needed_by: Array<{ module: string; node: string }>;
  /** The nodes recorded as holding it that are not on the mesh any more (revoked, released). */
  held_in_name_by: string[];
}

/** The nodes that are on the mesh: enrolled, or the same node away. */
export async function nodesOnMesh(sql: Sql): Promise<Set<string>> {
  const rows = await sql.query<{ name: string }>("SELECT name FROM nodes WHERE lifecycle_state IN ('enrolled', 'disconnected')");
  return new Set(rows.map((row) => row.name));
}

/**
 * The seats that would be left needed and held by no node on the mesh once `leaving` is gone
 * (or as things stand, without it). A holder or a need on a node that is not on the mesh counts
 * for nothing: a revoked holder answers no one, and a revoked node's modules need nothing.
 */
export async function seatsWithoutHolder(sql: Sql, leaving?: string): Promise<SeatWithoutHolder[]> {
  const onMesh = await nodesOnMesh(sql);
  if (leaving !== undefined) onMesh.delete(leaving);
  const [holdings, needs] = await Promise.all([seatHoldings(sql), seatNeeds(sql)]);
  const seats = [...new Set(needs.filter((need) => onMesh.has(need.node)).map((need) => need.seat))].sort();
  const left: SeatWithoutHolder[] = [];
  for (const seat of seats) {
    const holders = holdings.filter((holding) => holding.seat === seat);
    if (holders.some((holding) => onMesh.has(holding.node))) continue;
    left.push({
      seat,
      needed_by: needs.filter((need) => need.seat === seat && onMesh.has(need.node)).map((need) => ({ module: need.module, node: need.node })),
      held_in_name_by: [...new Set(holders.map((holding) => holding.node))],
    });
  }
  return left;
}

/**
 * The seats taking `node` off the mesh would leave without a holder: those it holds now, as
 * the last holder on the mesh, that something on another node still needs.
 */
export async function seatsLostWith(sql: Sql, node: string): Promise<SeatWithoutHolder[]> {
  const onMesh = await nodesOnMesh(sql);
  if (!onMesh.has(node)) return [];
  const held = new Set((await seatHoldings(sql)).filter((holding) => holding.node === node).map((holding) => holding.seat));
  return (await seatsWithoutHolder(sql, node)).filter((entry) => held.has(entry.seat));
}

/** `module app on node beta, module web on node gamma`. */
export function needsText(needs: ReadonlyArray<{ module: string; node: string }>): string {
  return needs.map((need) => `module ${need.module} on node ${need.node}`).join(', ');
}

/**
 * One status problem per seat left needed with no holder on the mesh (its holder revoked, or
 * released with --force), until one is added.
 */
export async function seatsWithoutHolderProblems(sql: Sql): Promise<StatusProblem[]> {
  return (await seatsWithoutHolder(sql)).map((entry) => ({
    kind: 'seat',
    subject: entry.seat,
    detail:
      `seat ${entry.seat} has no holder on the mesh${entry.held_in_name_by.length === 0 ? '' : ` (held in name only by ${entry.held_in_name_by.join(', ')}, no longer on the mesh)`}, ` +
      `and ${needsText(entry.needed_by)} need${entry.needed_by.length === 1 ? 's' : ''} it; add one: mesh-control seat ${entry.seat} --add NODE`,
  }));
}
