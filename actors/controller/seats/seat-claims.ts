import type { ControllerContext } from '../controller-context';
import type { ModuleRevision } from '../modules/modules.repo';
import { SeatNotHeld, SeatStillNeeded, SeatTaken } from './seat-errors';
import { isReplicated, seatClaimsOf, seatHoldings, seatNeeds } from './seats.repo';
import { nodesOnMesh } from './seats-left-without-holder';

/**
 * Refuses, before anything is assigned, modules put on `node` whose seats do not allow it: a
 * module holding a seat that is not replicated while another node holds it (SeatTaken), and a
 * module needing a seat no node would hold, this one included (SeatNotHeld). A holder answers
 * its own need: a module needing a seat that another module put on the same node holds is
 * assigned.
 */
export async function refuseSeatClaimsAtAssign(ctx: Pick<ControllerContext, 'store'>, node: string, put: readonly Pick<ModuleRevision, 'name' | 'version'>[]): Promise<void> {
  // A holder no longer on the mesh (revoked, released) holds the seat in name only.
  const onMesh = await nodesOnMesh(ctx.store);
  const holdings = (await seatHoldings(ctx.store)).filter((holding) => onMesh.has(holding.node));
  const claims = await Promise.all(put.map(async (revision) => ({ module: revision.name, ...(await seatClaimsOf(ctx.store, revision.name, revision.version)) })));
  const heldHere = new Set(claims.flatMap((claim) => claim.holds));
  for (const claim of claims) {
    for (const seat of claim.holds) {
      const other = holdings.find((holding) => holding.seat === seat && holding.node !== node);
      if (other !== undefined && !(await isReplicated(ctx.store, seat))) throw new SeatTaken(seat, other.node, node, `module ${claim.module} holds it, so nothing was assigned`);
    }
  }
  for (const claim of claims) {
    for (const seat of claim.needs) {
      if (!heldHere.has(seat) && !holdings.some((holding) => holding.seat === seat)) throw new SeatNotHeld(seat, claim.module, `nothing was assigned to node ${node}`);
    }
  }
}

/**
 * Refuses taking `modules` off `node` when that takes away the last holder of a seat something
 * else still needs (SeatStillNeeded, naming each module and node that needs it). The modules
 * taken off no longer need anything.
 */
export async function refuseLosingNeededSeats(ctx: Pick<ControllerContext, 'store'>, node: string, modules: readonly string[]): Promise<void> {
  const holdings = await seatHoldings(ctx.store);
  // A holder or a need on a node no longer on the mesh (revoked, released) counts for nothing.
  const onMesh = await nodesOnMesh(ctx.store);
  const leaving = (holding: { node: string; module: string | null }): boolean => holding.node === node && holding.module !== null && modules.includes(holding.module);
  const lost = new Set(holdings.filter(leaving).map((holding) => holding.seat));
  for (const seat of lost) {
    if (holdings.some((holding) => holding.seat === seat && !leaving(holding) && onMesh.has(holding.node))) continue;
    const needs = (await seatNeeds(ctx.store, seat)).filter((need) => onMesh.has(need.node) && !(need.node === node && modules.includes(need.module)));
    if (needs.length > 0) throw new SeatStillNeeded(seat, node, needs, 'nothing was unassigned');
  }
}

/**
 * Refuses registering a revision that nodes already run when what it claims could not stand
 * once a plan or push moves them to it: holding a seat that is not replicated on more than one
 * machine (SeatTaken), or needing a seat no node holds (SeatNotHeld). Checked at `module add`,
 * since the move itself is a rollout, not an assign, and has no one to ask.
 */
export async function refuseSeatClaimsOfRevision(
  ctx: Pick<ControllerContext, 'store'>,
  module: string,
  seats: { holds: readonly string[]; needs: readonly string[] } | undefined,
  running: readonly string[],
): Promise<void> {
  const [first] = running;
  if (seats === undefined || first === undefined) return;
  const holdings = await seatHoldings(ctx.store);
  for (const seat of seats.holds) {
    const others = [...new Set(holdings.filter((holding) => holding.seat === seat && holding.module !== module).map((holding) => holding.node))];
    const holders = [...new Set([...others, ...running])];
    if (holders.length > 1 && !(await isReplicated(ctx.store, seat))) {
      const holder = others[0] ?? first;
      const node = holders.find((candidate) => candidate !== holder) as string;
      throw new SeatTaken(seat, holder, node, `module ${module}'s new revision holds it and runs on ${running.join(', ')}, so it was not registered`);
    }
  }
  for (const seat of seats.needs) {
    if (!seats.holds.includes(seat) && !holdings.some((holding) => holding.seat === seat)) throw new SeatNotHeld(seat, module, `its new revision runs on ${running.join(', ')} already, so it was not registered`);
  }
}
