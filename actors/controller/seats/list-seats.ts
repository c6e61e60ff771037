import { KNOWN_SEATS, type SeatListed } from '../../../schema/seat';
import { overlayMembers } from '../declarations/declarations.repo';
import type { Sql } from '../store/sql-store';
import { readSeatState } from './compose-seats';
import { seatHoldings, seatNeeds, seatSettings } from './seats.repo';

/**
 * Every seat the mesh knows of, by name: the ones the controller gives meaning to, the ones an
 * operator set or added holders to, and the ones modules hold or need. Each with whether it is
 * replicated, its holders (how each holds it, and its overlay address, null when it is not on
 * the overlay and so holds it in name only), and the modules that need it.
 */
export async function listSeats(sql: Sql): Promise<SeatListed[]> {
  const [holdings, needs, settings, state, members] = await Promise.all([seatHoldings(sql), seatNeeds(sql), seatSettings(sql), readSeatState(sql), overlayMembers(sql)]);
  const address = new Map(members.map((member) => [member.name, member.address]));
  const names = new Set([...Object.keys(KNOWN_SEATS), ...settings.map((setting) => setting.name), ...holdings.map((holding) => holding.seat), ...needs.map((need) => need.seat)]);
  return [...names].sort().map((seat) => {
    const holders = new Map<string, SeatListed['holders'][number]>();
    for (const holding of holdings.filter((entry) => entry.seat === seat)) {
      const holder = holders.get(holding.node) ?? { node: holding.node, address: address.get(holding.node) ?? null, by_hand: false, modules: [] };
      if (holding.module === null) holder.by_hand = true;
      else holder.modules.push(holding.module);
      holders.set(holding.node, holder);
    }
    return {
      seat,
      replicated: state.replicated.has(seat),
      holders: [...holders.values()],
      needed_by: needs.filter((need) => need.seat === seat).map((need) => ({ module: need.module, node: need.node })),
      what: KNOWN_SEATS[seat]?.what ?? null,
    };
  });
}

/** What `seats` says: a line per seat, its holders indented under it. */
export function seatsText(seats: readonly SeatListed[]): string {
  if (seats.length === 0) return 'no seat is known; add a holder with: mesh-control seat NAME --add NODE';
  return seats.map(seatText).join('\n');
}

/** One seat in words, as `seats` and `seat` say it. */
export function seatText(seat: SeatListed): string {
  const lines = [`${seat.seat}  ${seat.replicated ? 'replicated' : 'single'}  ${seat.holders.length === 0 ? 'no holder' : `${seat.holders.length} holder(s)`}${seat.what === null ? '' : `  (${seat.what})`}`];
  for (const holder of seat.holders) {
    const how = [...(holder.by_hand ? ['by hand'] : []), ...holder.modules.map((module) => `through module ${module}`)].join(', ');
    lines.push(`  ${holder.node}  ${holder.address ?? 'not on the overlay'}  ${how}`);
  }
  if (seat.needed_by.length > 0) lines.push(`  needed by: ${seat.needed_by.map((need) => `${need.module} on ${need.node}`).join(', ')}`);
  if (seat.holders.length === 0 && seat.needed_by.length === 0) lines.push(`  give it a holder: mesh-control seat ${seat.seat} --add NODE`);
  return lines.join('\n');
}
