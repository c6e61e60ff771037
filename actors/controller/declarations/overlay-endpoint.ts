import { isIP } from 'node:net';
import type { InventoryAddress } from '../../../schema/inventory';
import { overlayPool, poolHolds } from '../enrolment/overlay-pool';

/** Where the overlay lives, for telling a node's underlay addresses from its overlay one. */
export interface OverlaySettings {
  cidr: string;
  listen_port: number;
  interface: string;
}

/** How peers reach a node: an endpoint, or why there is none. */
export type NodeReach =
  | { endpoint: string; note?: string }
  | { endpoint?: undefined; note: string };

// Interfaces that are this machine's own plumbing: an address on them is no one else's way in.
const VIRTUAL_INTERFACE = /^(?:lo|docker\d*|br-[0-9a-f]+|veth.*|virbr\d*|cni\d*|flannel\..*|cali.*|podman\d*|lxcbr\d*|tailscale\d*|zt.*|wg\d*)$/;

/**
 * Picks where peers send WireGuard packets to reach a node, from the addresses it reported in
 * its inventory: a public IPv4 first, then a global IPv6, then a private address (reachable
 * from its own network only, which the note says). Overlay addresses and the machine's own
 * bridges are never an endpoint. With none left the node is said to be unreachable, and its
 * peers wait for it to reach them (it keeps its side open with keepalives).
 */
export function nodeReach(addresses: readonly InventoryAddress[] | null | undefined, overlay: OverlaySettings): NodeReach {
  if (addresses === null || addresses === undefined) {
    return { note: 'its host reported no addresses (a host older than overlay endpoints): peers cannot start a tunnel to it; it reaches them' };
  }
  const pool = overlayPool(overlay.cidr);
  const usable = addresses.filter((entry) => entry.interface !== overlay.interface && !VIRTUAL_INTERFACE.test(entry.interface) && !(isIP(entry.address) === 4 && poolHolds(pool, entry.address)));
  const ranked = usable.map((entry) => ({ entry, rank: rankOf(entry.address) })).filter((item) => item.rank < 4).sort((a, b) => a.rank - b.rank);
  const best = ranked[0];
  if (best === undefined) {
    return { note: 'no address it reported is reachable from other machines (behind NAT?): peers cannot start a tunnel to it; it reaches them' };
  }
  const host = isIP(best.entry.address) === 6 ? `[${best.entry.address}]` : best.entry.address;
  const endpoint = `${host}:${overlay.listen_port}`;
  return best.rank >= 2 ? { endpoint, note: `private address on ${best.entry.interface}: reachable from its own network only` } : { endpoint };
}

/** The seconds between keepalives a node that peers cannot reach sends, to keep its NAT open. */
export const NAT_KEEPALIVE_SECONDS = 25;

// 0 public IPv4, 1 global IPv6, 2 private IPv4, 3 unique-local IPv6, 4 never (loopback,
// link-local, unspecified, multicast, shared address space of carrier NAT).
function rankOf(address: string): number {
  if (isIP(address) === 4) {
    const [a = 0, b = 0] = address.split('.').map(Number);
    if (a === 0 || a === 127 || a >= 224 || (a === 169 && b === 254) || (a === 100 && b >= 64 && b < 128)) return 4;
    if (a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)) return 2;
    return 0;
  }
  const lower = address.toLowerCase();
  if (lower === '::' || lower === '::1' || /^fe[89ab]/.test(lower) || lower.startsWith('ff')) return 4;
  if (/^f[cd]/.test(lower)) return 3;
  return 1;
}
