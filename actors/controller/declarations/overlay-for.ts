import { NAT_KEEPALIVE_SECONDS } from './overlay-endpoint';
import type { Overlay } from '../../../schema/overlay';

/** A node as the overlay sees it: its name, its assigned address, its WireGuard public key. */
export interface OverlayMember {
  name: string;
  /** Dotted IPv4, no prefix. */
  address: string;
  wireguard_public_key: string;
  /** Where peers send its packets (`host:port`), from its reported addresses; absent when none can be reached. */
  endpoint?: string;
}

/**
 * One node's overlay, derived from every member of the mesh: its own address as a /32 and its
 * own public key; every other member as a peer routing that member's /32; and the names of all
 * members, itself included. Peers and names are sorted by name, so the same mesh always gives
 * the same overlay and the same declaration bytes. Endpoints are left out: how peers find each
 * other on the underlay is not decided here.
 */
export function overlayFor(self: OverlayMember, members: readonly OverlayMember[], listenPort: number): Overlay {
  const sorted = [...members].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    address: `${self.address}/32`,
    public_key: self.wireguard_public_key,
    listen_port: listenPort,
    peers: sorted
      .filter((member) => member.name !== self.name)
      .map((member) => ({
        name: member.name,
        public_key: member.wireguard_public_key,
        allowed_ips: [`${member.address}/32`],
        ...(member.endpoint === undefined ? {} : { endpoint: member.endpoint }),
        ...(self.endpoint === undefined && member.endpoint !== undefined ? { persistent_keepalive: NAT_KEEPALIVE_SECONDS } : {}),
      })),
    names: [...sorted.filter((member) => member.name !== self.name), self]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((member) => ({ name: member.name, address: member.address })),
  };
}
