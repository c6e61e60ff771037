import { createHash } from 'node:crypto';
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

/** Where a systemd machine without kernel WireGuard is told to use wireguard-go for the service. */
export function userspaceDropInPath(iface: string): string {
  return `/etc/systemd/system/wg-quick@${iface}.service.d/mesh-userspace.conf`;
}

/** Where an OpenRC machine without kernel WireGuard is told to use wireguard-go for the service. */
export function userspaceConfdPath(iface: string): string {
  return `/etc/conf.d/wg-quick.${iface}`;
}

/** The action that brings a running interface's peers and routes in step with its configuration. */
export function overlaySyncActionName(iface: string): string {
  return `overlay-sync-${iface}`;
}

// Runs as `sh -c SCRIPT overlay-sync IFACE STAMP`. wg-quick reads the file only when it brings
// the interface up, so a peer that joined, left or changed its key would otherwise reach a
// running interface only at the next restart: `wg syncconf` changes the peers without dropping
// the tunnels that stay, the private key is set again from the file PostUp names (a re-keyed
// node has a new one; syncconf leaves the key alone when the file names none), and the routes
// follow the peers' allowed IPs (wg-quick made one per peer at up). An interface that is not up is left alone; its service reads the file when it
// starts. The stamp under /run records the configuration made live (gone at reboot, when the
// service reads the file anew). MESH_ROOT is set when the host manages a root other than `/`.
const SYNC_SCRIPT = [
  'set -eu',
  'iface=$1; stamp=$2; root=${MESH_ROOT:-}',
  'if wg show "$iface" >/dev/null 2>&1; then',
  '  stripped=$(mktemp); trap \'rm -f "$stripped"\' EXIT',
  '  wg-quick strip "$root/etc/wireguard/$iface.conf" >"$stripped"',
  '  wg syncconf "$iface" "$stripped"',
  // PostUp names the key as one shell word, quoted when it holds a space (see shellWord).
  '  key=$(sed -n "s/^PostUp = wg set %i private-key //p" "$root/etc/wireguard/$iface.conf" | sed "s/^\'\\(.*\\)\'\\$/\\1/")',
  '  if [ -n "$key" ] && [ -f "$key" ]; then wg set "$iface" private-key "$key"; fi',
  // Lines are `KEY<TAB>CIDR CIDR…`; a key may hold "/" itself, so only the field after the tab is read.
  '  wanted=$(wg show "$iface" allowed-ips | cut -f2 | tr " " "\\n" | grep -E "^[0-9A-Fa-f.:]+/[0-9]+$" || true)',
  '  for cidr in $wanted; do ip route replace "$cidr" dev "$iface"; done',
  '  for cidr in $(ip route show dev "$iface" | cut -d" " -f1); do',
  '    case "$cidr" in */*) ;; *) cidr=$cidr/32 ;; esac',
  '    printf "%s\n" "$wanted" | grep -qx "$cidr" || ip route del "$cidr" dev "$iface" || true',
  '  done',
  'fi',
  'mkdir -p "$root/run/mesh"',
  'rm -f "$root/run/mesh/overlay-$iface".*',
  ': >"$root/run/mesh/overlay-$iface.$stamp"',
].join('\n');

/**
 * The overlay written as ordinary resources: the WireGuard configuration (0600: it names the
 * peers' keys and where the private key is), the names file, and then what the profile says
 * this machine can run. With WireGuard from the kernel or wireguard-go: the wg-quick service
 * where the init is systemd or OpenRC (told to use wireguard-go when that is how), and an
 * action that makes a peer change live on a running interface. A machine with no init the
 * mesh drives gets the files and the action; one without WireGuard at all gets the files alone
 * (`mesh-control nodes` says why it has no tunnel). An older host that did not say where its
 * WireGuard comes from gets the service, as before.
 */
export function overlayResources(nodeName: string, overlay: Overlay, iface: string, profile: Pick<Profile, 'init' | 'wireguard' | 'wireguard_key_path'> | null | undefined): Resource[] {
  const config = renderWireguardConfig(nodeName, overlay, profile?.wireguard_key_path);
  const resources: Resource[] = [
    { shape: 'file', path: wireguardConfigPath(iface), content: { text: config }, mode: '0600', owner: 'root', group: 'root' },
    { shape: 'file', path: MESH_HOSTS_PATH, content: { text: renderHostsFile(overlay.names) }, mode: '0644', owner: 'root', group: 'root' },
  ];
  const wireguard = profile?.wireguard;
  if (wireguard === 'none') return resources;
  if (wireguard === 'wireguard-go') resources.push(...userspaceResources(iface, profile?.init));
  const service = wireguardServiceName(iface, profile?.init);
  if (service !== undefined) resources.push({ shape: 'service', name: service, state: 'running', enabled: true });
  if (wireguard !== undefined) {
    const stamp = createHash('sha256').update(config).digest('hex').slice(0, 16);
    resources.push({
      shape: 'action',
      name: overlaySyncActionName(iface),
      argv: ['sh', '-c', SYNC_SCRIPT, 'overlay-sync', iface, stamp],
      timeout_seconds: 60,
      guard: { creates: `/run/mesh/overlay-${iface}.${stamp}` },
    });
  }
  return resources;
}

// wg-quick falls back to wireguard-go by itself when the module is missing; saying so in the
// service's environment makes the choice the profile's, visible in the unit, not a fallback.
function userspaceResources(iface: string, init: Profile['init'] | undefined): Resource[] {
  const setting = 'WG_QUICK_USERSPACE_IMPLEMENTATION=wireguard-go';
  switch (init) {
    case 'systemd':
      return [{ shape: 'file', path: userspaceDropInPath(iface), content: { text: `# Written by the mesh controller: this machine's kernel has no WireGuard.\n[Service]\nEnvironment=${setting}\n` }, mode: '0644', owner: 'root', group: 'root' }];
    case 'openrc':
      return [{ shape: 'file', path: userspaceConfdPath(iface), content: { text: `# Written by the mesh controller: this machine's kernel has no WireGuard.\nexport ${setting}\n` }, mode: '0644', owner: 'root', group: 'root' }];
    default:
      return [];
  }
}
