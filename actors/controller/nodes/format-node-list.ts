import { formatTable } from '../../shared/cli/format-table';
import { formatAway } from './format-away';
import type { NodeListing } from './list-nodes';

/**
 * The node list as a table for a terminal, or a line saying how to get a first node. Last
 * contact is said beside the silence bound of the node's kind, so a reader knows how much a
 * quiet episodic host (a phone) says: little; and an absence relative to `now`.
 */
export function formatNodeList(nodes: readonly NodeListing[], now: Date): string {
  if (nodes.length === 0) return 'no nodes yet: issue a token with `mesh-control token issue --new` and enrol a machine with it (nox-mesh-host enrol --token …)';
  return formatTable(
    nodes.map((node) => [node.name, node.lifecycle_state, node.host_kind ?? '-', node.address ?? '-', node.version_running ?? '-', lastSeen(node), formatAway(node, now)]),
    ['NAME', 'STATE', 'KIND', 'ADDRESS', 'VERSION', 'LAST SEEN', 'AWAY'],
  );
}

// Only a node holding an identity is judged by its silence.
function lastSeen(node: NodeListing): string {
  if (node.lifecycle_state !== 'enrolled' && node.lifecycle_state !== 'disconnected') return node.last_seen;
  const bound = node.silence_bound_seconds;
  return `${node.last_seen} (bound ${bound >= 60 && bound % 60 === 0 ? `${bound / 60} min` : `${bound} s`})`;
}
