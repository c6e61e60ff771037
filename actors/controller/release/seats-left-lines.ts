import { needsText, type SeatWithoutHolder } from '../seats/seats-left-without-holder';

/**
 * The warning `node release --force` and `node revoke` end with: each seat the node leaves
 * needed with no holder on the mesh, what needs it, and how to give it one.
 */
export function seatsLeftLines(seats: readonly SeatWithoutHolder[]): string[] {
  return seats.map(
    (entry) =>
      `WARNING: seat ${entry.seat} is left without a holder on the mesh, and ${needsText(entry.needed_by)} need${entry.needed_by.length === 1 ? 's' : ''} it; ` +
      `add one: mesh-control seat ${entry.seat} --add NODE (mesh-control status names it until then)`,
  );
}
