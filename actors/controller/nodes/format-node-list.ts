import { formatTable } from '../../shared/cli/format-table';
import type { NodeListing } from './list-nodes';

/** The node list as a table for a terminal, or a line saying how to get a first node. */
export function formatNodeList(nodes: readonly NodeListing[]): string {
  if (nodes.length === 0) return 'no nodes yet: issue a token with `mesh-control token issue --new` and enrol a machine with it (nox-mesh-host enrol --token …)';
  return formatTable(
    nodes.map((node) => [node.name, node.lifecycle_state, node.address ?? '-', node.version_running ?? '-', node.last_seen]),
    ['NAME', 'STATE', 'ADDRESS', 'VERSION', 'LAST SEEN'],
  );
}
