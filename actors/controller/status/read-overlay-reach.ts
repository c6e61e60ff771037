import { STATUS_LIST_MAX, type ControllerStatus, type StatusProblem } from '../../../schema/controller-status';
import type { OverlaySettings } from '../declarations/overlay-endpoint';
import { overlayReach, type ReachRow } from '../nodes/list-nodes';
import type { Sql } from '../store/sql-store';

/** The overlay part of status, and the problem it makes when there is one. */
export interface OverlayReachStatus {
  overlay: NonNullable<ControllerStatus['overlay']>;
  problems: StatusProblem[];
}

/**
 * Reads how every node on the overlay is reached, as `mesh-control nodes` judges it, and names
 * those not reached the ordinary way. Unreachable nodes are a problem only two at a time: one
 * alone opens its tunnels to the others, but two with no endpoint have no way to start one
 * between them, and the mesh promises every node reaches every other.
 */
export async function readOverlayReach(sql: Sql, settings: OverlaySettings): Promise<OverlayReachStatus> {
  const rows = await sql.query<ReachRow & { name: string }>(
    `SELECT name, lifecycle_state, overlay_address, inventory->'addresses' AS addresses, profile->>'wireguard' AS wireguard
       FROM nodes
      WHERE lifecycle_state IN ('enrolled', 'disconnected') AND overlay_address IS NOT NULL
      ORDER BY name COLLATE "C"`,
  );
  const named = { unreachable: [] as string[], unreported: [] as string[], no_wireguard: [] as string[] };
  for (const row of rows) {
    const reach = overlayReach(row, settings).overlay_reach;
    if (reach === 'unreachable') named.unreachable.push(row.name);
    else if (reach === 'unreported') named.unreported.push(row.name);
    else if (reach === 'no-wireguard') named.no_wireguard.push(row.name);
  }
  const listed = (names: string[]) => ({ count: names.length, nodes: names.slice(0, STATUS_LIST_MAX) });
  const problems: StatusProblem[] = [];
  if (named.unreachable.length >= 2) {
    const some = named.unreachable.slice(0, STATUS_LIST_MAX).join(', ');
    problems.push({
      kind: 'overlay',
      subject: 'overlay',
      detail: `${named.unreachable.length} nodes have no address another node can dial (${some}${named.unreachable.length > STATUS_LIST_MAX ? ', …' : ''}): no tunnel can start between any two of them; give one of each pair a public address or forward UDP port ${settings.listen_port} to it (docs/overlay.md)`,
    });
  }
  return { overlay: { unreachable: listed(named.unreachable), unreported: listed(named.unreported), no_wireguard: listed(named.no_wireguard) }, problems };
}
