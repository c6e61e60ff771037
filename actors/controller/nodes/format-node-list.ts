import { formatTable } from '../../shared/cli/format-table';
import { formatAway } from './format-away';
import type { NodeListing, OverlayReach } from './list-nodes';

/**
 * The node list as a table for a terminal, or a line saying how to get a first node. Last
 * contact is said beside the silence bound of the node's kind, so a reader knows how much a
 * quiet episodic host (a phone) says: little; and an absence relative to `now`.
 */
export function formatNodeList(nodes: readonly NodeListing[], now: Date): string {
  if (nodes.length === 0) return 'no nodes yet: issue a token with `mesh-control token issue --new` and enrol a machine with it (nox-mesh-host enrol --token …)';
  const table = formatTable(
    nodes.map((node) => [node.name, node.lifecycle_state, node.host_kind ?? '-', addressOf(node), node.version_running ?? '-', lastSeen(node), formatAway(node, now)]),
    ['NAME', 'STATE', 'KIND', 'ADDRESS', 'VERSION', 'LAST SEEN', 'AWAY'],
  );
  // A node whose tunnels are not ordinary says so beside its address, so one that peers cannot
  // reach is never silently left without tunnels; what each word means is said once, below.
  const unusual = nodes.filter((node) => node.overlay_reach !== null && node.overlay_reach !== undefined && node.overlay_reach !== 'direct');
  if (unusual.length === 0) return table;
  const words = [...new Set(unusual.map((node) => node.overlay_reach as OverlayReach))].sort();
  return [table, 'overlay:', ...words.map((word) => `  ${word}: ${REACH_MEANS[word]}`)].join('\n');
}

// The address, and how peers reach it where that is not the ordinary way.
function addressOf(node: NodeListing): string {
  const reach = node.overlay_reach;
  if (node.address === null) return '-';
  return reach === null || reach === undefined || reach === 'direct' ? node.address : `${node.address} (${reach})`;
}

const REACH_MEANS: Record<OverlayReach, string> = {
  direct: 'peers reach it at a public address',
  'own-network': 'peers reach it at a private address, from its own network only',
  unreachable: 'no address it reported can be reached (behind NAT?): peers cannot start a tunnel to it; it opens them, with keepalives',
  unreported: 'its host said no addresses (older than overlay endpoints): upgrade it; it opens the tunnels meanwhile',
  'no-wireguard': 'no WireGuard on the machine: install wireguard-tools and wireguard-go (or a kernel with WireGuard), then enrol it again (mesh-control token issue --node NAME) so its profile says so',
};

// Only a node holding an identity is judged by its silence.
function lastSeen(node: NodeListing): string {
  if (node.lifecycle_state !== 'enrolled' && node.lifecycle_state !== 'disconnected') return node.last_seen;
  const bound = node.silence_bound_seconds;
  return `${node.last_seen} (bound ${bound >= 60 && bound % 60 === 0 ? `${bound / 60} min` : `${bound} s`})`;
}
