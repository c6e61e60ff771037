import * as z from 'zod';
import { IsoTime } from './primitives';

// Read off a real machine, so names and states are taken as the machine spells them: refusing
// a whole inventory over one odd package name would hide the rest of the machine.
const Word = z
  .string()
  .min(1)
  .max(512, { error: 'at most 512 characters' })
  .refine((text) => ![...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f), {
    error: 'must not contain control characters',
  });

/**
 * One address the machine holds on one of its interfaces, as the running kernel says it. The
 * controller picks a node's WireGuard endpoint from these; the overlay's own are left out by it.
 */
export const InventoryAddress = z.strictObject({
  interface: z.string().regex(/^[^\s/]{1,15}$/, { error: 'expected an interface name like "eth0" (at most 15 characters)' }),
  address: z.union([z.ipv4(), z.ipv6()], { error: 'expected an IP address like "192.0.2.7"' }),
});
/** See {@link InventoryAddress}. */
export type InventoryAddress = z.infer<typeof InventoryAddress>;

/**
 * What a machine already has: installed packages, services and containers. The host reports it
 * at enrolment and on request; the controller decides from it (with the profile) and adoption
 * compares against it. `truncated` says the host stopped listing at its bound.
 */
export const Inventory = z.strictObject({
  packages: z.array(z.strictObject({ name: Word, version: Word })),
  services: z.array(
    z.strictObject({ name: Word, state: z.enum(['running', 'stopped', 'failed', 'unknown']), enabled: z.boolean() }),
  ),
  containers: z.array(
    z.strictObject({
      name: Word,
      image: Word,
      // As the runtime says it: "running", "exited", "paused", "created", …
      state: z.string().regex(/^[a-z-]{1,32}$/, { error: 'expected a container state like "running" or "exited"' }),
    }),
  ),
  // Optional: hosts older than the overlay's endpoints did not report it.
  addresses: z.array(InventoryAddress).max(256, { error: 'at most 256 addresses' }).optional(),
  collected_at: IsoTime,
  truncated: z.boolean().optional(),
});
/** See {@link Inventory}. */
export type Inventory = z.infer<typeof Inventory>;
