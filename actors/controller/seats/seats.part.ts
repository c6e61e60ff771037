import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { changeSeat, SeatChangeArgs, type SeatChanged } from './change-seat';
import { listSeats, seatsText, seatText } from './list-seats';

/** The arguments of `seats`: none. */
export const SeatsArgs = z.strictObject({});

/** Seats: `seat` (change one) and `seats` (which only reads). */
export const seatsPart: ControllerPart = {
  name: 'seats',
  start: async (_ctx, verbs) => {
    verbs.register('seat', SeatChangeArgs, async (callCtx, args) => {
      const changed = await changeSeat(callCtx, args);
      return { result: changed, text: seatChangedText(changed) };
    });
    verbs.register('seats', SeatsArgs, async (callCtx) => {
      const seats = await listSeats(callCtx.store);
      return { result: { seats }, text: seatsText(seats) };
    }, { query: true });
    return { stop: async () => undefined };
  },
};

/** What `seat` says: what changed, the seat now, and what was sent where. */
export function seatChangedText(changed: SeatChanged): string {
  const lines = [changed.changed.length === 0 ? `seat ${changed.seat}: nothing changed` : `seat ${changed.seat}: ${changed.changed.join(', ')}`, seatText(changed.now)];
  const sent = changed.sent.filter((entry) => entry.generation !== null);
  const held = changed.sent.filter((entry) => entry.generation === null);
  if (sent.length > 0) lines.push(`sent again to ${sent.length} node(s): ${sent.map((entry) => `${entry.node} (generation ${entry.generation})`).join(', ')}`);
  for (const entry of held) lines.push(`not sent to ${entry.node} yet: ${entry.held ?? 'no reason given'}`);
  return lines.join('\n');
}
