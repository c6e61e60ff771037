import { createHash } from 'node:crypto';
import type { OverlayName } from '../../../schema/overlay';
import type { Profile } from '../../../schema/profile';
import type { Resource } from '../../../schema/resource';
import { KNOWN_SEATS, MESH_DNS_RESOLVER, type SeatRoster } from '../../../schema/seat';
import type { Sql } from '../store/sql-store';
import { renderHostsFile } from '../declarations/render-hosts-file';
import {
  RESOLV_CONF_PATH,
  RESOLVER_CONFIG_PATH,
  RESOLVER_SERVICE,
  renderResolvConf,
  renderResolverConfig,
  renderResolverInitScript,
  renderResolverUnit,
} from './render-resolver';
import { seatHoldings, seatSettings } from './seats.repo';

/** The seats as they stand: each seat's holders by node name (sorted), and which are replicated. */
export interface SeatState {
  holders: ReadonlyMap<string, readonly string[]>;
  replicated: ReadonlySet<string>;
}

/** Reads every seat's holders (by hand and through modules) and which seats are replicated. */
export async function readSeatState(sql: Sql): Promise<SeatState> {
  const holders = new Map<string, string[]>();
  for (const holding of await seatHoldings(sql)) {
    const nodes = holders.get(holding.seat) ?? [];
    if (!nodes.includes(holding.node)) nodes.push(holding.node);
    holders.set(holding.seat, nodes);
  }
  const replicated = new Set(Object.entries(KNOWN_SEATS).filter(([, seat]) => seat.replicated).map(([name]) => name));
  for (const setting of await seatSettings(sql)) {
    if (setting.replicated) replicated.add(setting.name);
    else replicated.delete(setting.name);
  }
  for (const nodes of holders.values()) nodes.sort();
  return { holders, replicated };
}

/**
 * The roster fact of `node`'s declaration: each replicated seat with a holder on the overlay,
 * its holders this node first, then the others by name. Undefined when there is none, so a
 * mesh without replicated seats sends the same declarations as before.
 */
export function seatRoster(node: string, state: SeatState, names: readonly OverlayName[]): SeatRoster | undefined {
  const onOverlay = new Set(names.map((entry) => entry.name));
  const roster: SeatRoster = {};
  for (const seat of [...state.replicated].sort()) {
    const holders = (state.holders.get(seat) ?? []).filter((holder) => onOverlay.has(holder));
    if (holders.length > 0) roster[seat] = thisFirst(node, holders);
  }
  return Object.keys(roster).length === 0 ? undefined : roster;
}

/**
 * What the seats the controller gives meaning to declare on `node`. The resolver seat
 * (mesh-dns-resolver): on each holder, the DNS server's configuration and what runs it; on
 * every node, a resolv.conf naming the holders' overlay addresses and nothing else. Holders
 * not on the overlay (released, revoked, not enrolled yet) are left out: their address would
 * answer nobody. No holder on the overlay: nothing, and each node's own resolv.conf is handed
 * back to it.
 */
export function seatResources(node: string, state: SeatState, names: readonly OverlayName[], profile: Pick<Profile, 'init' | 'package_manager'> | null): Resource[] {
  const address = new Map(names.map((entry) => [entry.name, entry.address]));
  const holders = thisFirst(node, (state.holders.get(MESH_DNS_RESOLVER) ?? []).filter((holder) => address.has(holder)));
  if (holders.length === 0) return [];
  const resources: Resource[] = [];
  const own = holders[0] === node ? address.get(node) : undefined;
  if (own !== undefined) resources.push(...resolverHolderResources(own, names, profile));
  const nameservers = holders.map((holder) => address.get(holder) as string);
  resources.push({ shape: 'file', path: RESOLV_CONF_PATH, content: { text: renderResolvConf(nameservers) }, mode: '0644', owner: 'root', group: 'root' });
  return resources;
}

/** Where each package manager has the DNS server (Debian splits it from its service files). */
const DNSMASQ_PACKAGE: Partial<Record<Profile['package_manager'], string>> = { apt: 'dnsmasq-base', pacman: 'dnsmasq', apk: 'dnsmasq' };

// Runs as `sh -c SCRIPT mesh-dns-reload INIT STAMP`: the DNS server reads the names file at
// start and on SIGHUP only, so a node that joined or left reaches it through this, once per
// names file and configuration (the stamp under /run).
const RELOAD_SCRIPT = [
  'set -eu',
  'init=$1; stamp=$2; root=${MESH_ROOT:-}',
  `case "$init" in`,
  `  systemd) systemctl try-reload-or-restart ${RESOLVER_SERVICE}.service ;;`,
  `  openrc) rc-service ${RESOLVER_SERVICE} reload || rc-service ${RESOLVER_SERVICE} restart ;;`,
  'esac',
  'mkdir -p "$root/run/mesh"',
  'rm -f "$root/run/mesh/dns-resolver".*',
  ': >"$root/run/mesh/dns-resolver.$stamp"',
].join('\n');

function resolverHolderResources(address: string, names: readonly OverlayName[], profile: Pick<Profile, 'init' | 'package_manager'> | null): Resource[] {
  const config = renderResolverConfig(address);
  const resources: Resource[] = [];
  const pkg = profile === null ? undefined : DNSMASQ_PACKAGE[profile.package_manager];
  if (pkg !== undefined) resources.push({ shape: 'package', name: pkg });
  resources.push({ shape: 'file', path: RESOLVER_CONFIG_PATH, content: { text: config }, mode: '0644', owner: 'root', group: 'root' });
  const init = profile?.init;
  if (init === 'systemd') {
    resources.push({ shape: 'file', path: `/etc/systemd/system/${RESOLVER_SERVICE}.service`, content: { text: renderResolverUnit() }, mode: '0644', owner: 'root', group: 'root' });
  } else if (init === 'openrc') {
    resources.push({ shape: 'file', path: `/etc/init.d/${RESOLVER_SERVICE}`, content: { text: renderResolverInitScript() }, mode: '0755', owner: 'root', group: 'root' });
  } else {
    // No init the mesh drives: the files alone; whatever starts processes there runs
    // `dnsmasq --keep-in-foreground --conf-file=/etc/mesh/dnsmasq.conf`.
    return resources;
  }
  resources.push({ shape: 'service', name: RESOLVER_SERVICE, state: 'running', enabled: true });
  const stamp = createHash('sha256').update(config).update(renderHostsFile(names)).digest('hex').slice(0, 16);
  resources.push({
    shape: 'action',
    name: 'mesh-dns-reload',
    argv: ['sh', '-c', RELOAD_SCRIPT, 'mesh-dns-reload', init, stamp],
    timeout_seconds: 30,
    guard: { creates: `/run/mesh/dns-resolver.${stamp}` },
  });
  return resources;
}

function thisFirst(node: string, holders: readonly string[]): string[] {
  const others = holders.filter((holder) => holder !== node).sort();
  return holders.includes(node) ? [node, ...others] : others;
}
