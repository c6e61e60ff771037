import * as z from 'zod';
import { NodeName } from './primitives';

// A seat is a role on the mesh held by one machine, or by several where the seat is replicated
// (`mesh-control seat NAME --add NODE`, or a module that holds it, assigned to a node). Modules
// say which seats they hold and which they need in module.json; the controller composes what a
// seat means on its holders and on every other node (the resolver seat: the DNS server on its
// holders, the resolver configuration everywhere).

/** A seat's name: one DNS label, like a module's (`mesh-dns-resolver`). */
export const SeatName = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, { error: 'expected a seat name: lowercase letters, digits and "-", like "mesh-dns-resolver"' });
/** See {@link SeatName}. */
export type SeatName = z.infer<typeof SeatName>;

/**
 * The seats a module claims in its module.json (`"seats": {"holds": [...], "needs": [...]}`):
 * a node it is assigned to becomes a holder of each seat it holds, and it may be assigned only
 * where each seat it needs has a holder somewhere on the mesh (its own node counts).
 */
export const ModuleSeats = z.strictObject({
  holds: z.array(SeatName).max(16).default([]),
  needs: z.array(SeatName).max(16).default([]),
});
/** See {@link ModuleSeats}. */
export type ModuleSeats = z.infer<typeof ModuleSeats>;

/**
 * The roster fact of a node's declaration: each replicated seat that has holders, with its
 * holders by node name, this node first when it holds the seat, then the others by name.
 */
export const SeatRoster = z.record(SeatName, z.array(NodeName).min(1).max(256));
/** See {@link SeatRoster}. */
export type SeatRoster = z.infer<typeof SeatRoster>;

/** The mesh's resolver: its holders answer mesh names; every node's resolv.conf lists them and nothing else. */
export const MESH_DNS_RESOLVER = 'mesh-dns-resolver';

/**
 * Seats the controller knows the meaning of, with how each is held until an operator says
 * otherwise. The resolver is replicated from the start: the point of it is two machines
 * answering, with no public resolver beside them (musl asks every nameserver at once).
 */
export const KNOWN_SEATS: Readonly<Record<string, { replicated: boolean; what: string }>> = {
  [MESH_DNS_RESOLVER]: { replicated: true, what: 'answers mesh names over the overlay; every node resolves through its holders' },
};

/** How one node holds a seat: by `seat NAME --add` (`seat`), or through modules assigned to it. */
export const SeatHolder = z.strictObject({
  node: NodeName,
  /** Its overlay address, null when it is not on the overlay (released, revoked, not yet enrolled). */
  address: z.string().nullable(),
  by_hand: z.boolean(),
  modules: z.array(z.string()),
});
/** See {@link SeatHolder}. */
export type SeatHolder = z.infer<typeof SeatHolder>;

/** One seat as `seats --json` lists it. */
export const SeatListed = z.strictObject({
  seat: SeatName,
  replicated: z.boolean(),
  holders: z.array(SeatHolder),
  /** Modules that need the seat, with the node each runs on. */
  needed_by: z.array(z.strictObject({ module: z.string(), node: NodeName })),
  /** What the controller composes from it, for a seat it knows; null for one only modules give meaning to. */
  what: z.string().nullable(),
});
/** See {@link SeatListed}. */
export type SeatListed = z.infer<typeof SeatListed>;
