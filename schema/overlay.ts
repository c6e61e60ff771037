import * as z from 'zod';
import { Base64Bytes32, NodeName } from './primitives';
import { refuseDuplicates } from './refuse-duplicates';

// The overlay is derived centrally and pushed down: the node computes nothing about the mesh.
// The controller writes it into a declaration; the host configures WireGuard and names from it.

const Cidr = z.union([z.cidrv4(), z.cidrv6()], { error: 'expected an address with a prefix, like "10.77.0.5/32"' });
const IpAddress = z.union([z.ipv4(), z.ipv6()], { error: 'expected an IP address like "10.77.0.5"' });
const ListenPort = z
  .int({ error: 'expected a port number 1-65535' })
  .min(1, { error: 'expected a port number 1-65535' })
  .max(65535, { error: 'expected a port number 1-65535' });

// host:port, with an IPv6 host in brackets as WireGuard writes it.
const Endpoint = z
  .string()
  .regex(/^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]{0,252}):[1-9][0-9]{0,4}$/, {
    error: 'expected an endpoint like "203.0.113.7:51820" or "[2001:db8::1]:51820"',
  })
  .refine((endpoint) => Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)) <= 65535, {
    error: 'the endpoint port must be 1-65535',
  });

/** A WireGuard peer of this node: another node, how to reach it, and what it routes. */
export const OverlayPeer = z.strictObject({
  name: NodeName,
  public_key: Base64Bytes32,
  endpoint: Endpoint.optional(),
  allowed_ips: z.array(Cidr),
  persistent_keepalive: z
    .int({ error: 'expected whole seconds, 1-65535' })
    .min(1, { error: 'expected whole seconds, 1-65535; leave it out to turn keepalive off' })
    .max(65535, { error: 'expected whole seconds, 1-65535' })
    .optional(),
});
/** See {@link OverlayPeer}. */
export type OverlayPeer = z.infer<typeof OverlayPeer>;

/** A name the node resolves on the overlay (`db.mesh` → `10.77.0.9`). */
export const OverlayName = z.strictObject({
  name: z
    .string()
    .max(253, { error: 'a DNS name is at most 253 characters' })
    .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, {
      error: 'expected a lowercase DNS name like "db.mesh"',
    }),
  address: IpAddress,
});
/** See {@link OverlayName}. */
export type OverlayName = z.infer<typeof OverlayName>;

/**
 * This node's place on the overlay: its address, its WireGuard public key (the private half
 * never leaves the node), its peers and its names. Peers and names are unique, because
 * WireGuard refuses a peer key twice and a name has one address.
 */
export const Overlay = z.strictObject({
  address: Cidr,
  public_key: Base64Bytes32,
  listen_port: ListenPort.optional(),
  peers: z
    .array(OverlayPeer)
    .superRefine(refuseDuplicates('peer name', (peer) => peer.name, 'name'))
    .superRefine(refuseDuplicates('peer public key', (peer) => peer.public_key, 'public_key')),
  names: z.array(OverlayName).superRefine(refuseDuplicates('name', (entry) => entry.name, 'name')),
});
/** See {@link Overlay}. */
export type Overlay = z.infer<typeof Overlay>;
