import type { Overlay } from '../../../schema/overlay';
import type { Profile } from '../../../schema/profile';
import type { Resource } from '../../../schema/resource';
import { renderHostsFile } from './render-hosts-file';
import { renderWireguardConfig } from './render-wireguard-config';

/** Where the overlay's names are written, in hosts(5) form. */
export const MESH_HOSTS_PATH = '/etc/mesh/hosts';

/** The wg-quick configuration file of the overlay interface. */
export function wireguardConfigPath(iface: string): string {
  return `/etc/wireguard/${iface}.conf`;
}

/** The init's name for the service that brings the overlay interface up, or undefined without one the mesh may drive. */
export function wireguardServiceName(iface: string, init: Profile['init'] | undefined): string | undefined {
  switch (init) {
    case 'systemd':
      return `wg-quick@${iface}`;
    case 'openrc':
      return `wg-quick.${iface}`;
    default:
      return undefined;
  }
}

/**
 * The overlay written as ordinary resources: the WireGuard configuration (0600: it names the
 * peers' keys and where the private key is), the names file, and — only where the profile
 * says the init is systemd or OpenRC — the wg-quick service, running and enabled. A machine
 * with no init the mesh drives gets the files alone; the profile decides, not a guess.
 */
export function overlayResources(nodeName: string, overlay: Overlay, iface: string, init: Profile['init'] | undefined): Resource[] {
  const resources: Resource[] = [
    { shape: 'file', path: wireguardConfigPath(iface), content: { text: renderWireguardConfig(nodeName, overlay) }, mode: '0600', owner: 'root', group: 'root' },
    { shape: 'file', path: MESH_HOSTS_PATH, content: { text: renderHostsFile(overlay.names) }, mode: '0644', owner: 'root', group: 'root' },
  ];
  const service = wireguardServiceName(iface, init);
  if (service !== undefined) resources.push({ shape: 'service', name: service, state: 'running', enabled: true });
  return resources;
}
