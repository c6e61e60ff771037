import type { HostKind } from '../../../schema/resource';
import { HEARTBEAT_PERIOD_MS, silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import type { InventoryAddress } from '../../../schema/inventory';
import { nodeReach, type OverlaySettings } from '../declarations/overlay-endpoint';
import type { Sql } from '../store/sql-store';
import { formatLastSeen } from './format-last-seen';

/** A node's last absence as the controller saw it, once it came back. */
export interface NodeAbsence {
  /** The heartbeat that brought it back, ISO-8601. */
  back_at: string;
  /** How long it had been silent by then (from when it was last heard from). */
  seconds: number;
}

/** One node as `mesh-control nodes` shows it. */
export interface NodeListing {
  name: string;
  /** enrolled, disconnected, revoked or released, as the store keeps it. */
  lifecycle_state: string;
  /** resident or episodic, as its latest heartbeat (else its profile) says; null when unknown. */
  host_kind: HostKind | null;
  /** The silence after which it is shown disconnected: three heartbeat periods of its kind. */
  silence_bound_seconds: number;
  /** The node's overlay address, once one is assigned. */
  address: string | null;
  /** The host version the node last said it runs (not what is installed). */
  version_running: string | null;
  /** Last contact, ISO-8601, or null when never heard from. */
  last_seen_at: string | null;
  /** The same as a fact for a person: `last seen 4 days ago`, `never seen`. */
  last_seen: string;
  /** While disconnected: since when it has been silent, ISO-8601; null otherwise. */
  disconnected_since: string | null;
  /** Its last absence, once it has come back from one; null before. */
  last_away: NodeAbsence | null;
  /** The host's own account of its last time unlinked (its clock), in seconds; null when it never said one. */
  host_away_seconds: number | null;
  /** How peers reach it on the overlay (see {@link OverlayReach}); null when it is not on the overlay. */
  overlay_reach: OverlayReach | null;
}

/**
 * How a node's tunnels come about: `direct` (peers reach it at a public address), `own-network`
 * (at a private address, from its own network only), `unreachable` (no address peers can reach:
 * it opens the tunnels), `unreported` (its host is older than overlay endpoints and said no
 * addresses), `no-wireguard` (the machine has no WireGuard to make a tunnel with).
 */
export type OverlayReach = 'direct' | 'own-network' | 'unreachable' | 'unreported' | 'no-wireguard';

// The overlay as `mesh-control init` makes it, for callers that do not pass the mesh's own.
export const DEFAULT_OVERLAY: OverlaySettings = { cidr: '10.77.0.0/16', listen_port: 51820, interface: 'mesh0' };

/** Which node records to list: those named after `after`, at most `limit` of them. */
export interface NodeRange {
  after?: string;
  limit?: number;
}

interface ListedRow {
  name: string;
  lifecycle_state: string;
  host_kind: HostKind | null;
  overlay_address: string | null;
  version_running: string | null;
  last_seen_at: Date | string | null;
  disconnected_since: Date | string | null;
  away_from: Date | string | null;
  away_until: Date | string | null;
  host_away_seconds: number | string | null;
  addresses: InventoryAddress[] | null;
  wireguard: string | null;
}

/**
 * The node records by name, with last contact said as a fact relative to `now`, and each
 * node's kind with the heartbeat period and silence bound that follow from it (`periods`,
 * production's unless given): every one, or the `range.limit` first named after `range.after`.
 *
 * Names are compared byte by byte (COLLATE "C"), not in the database's locale, so the order,
 * and so which nodes a page holds, is the same on PGlite and on any PostgreSQL server, and is
 * the order of JavaScript's `<` on names (which are ASCII). Only the columns shown are read:
 * a node's inventory and profile can be large, and a page reads a thousand rows.
 */
export async function listNodeRecords(
  sql: Sql,
  now: Date,
  range: NodeRange = {},
  periods: Readonly<Record<HostKind, number>> = HEARTBEAT_PERIOD_MS,
  overlay: OverlaySettings = DEFAULT_OVERLAY,
): Promise<NodeListing[]> {
  const rows = await sql.query<ListedRow>(
    `SELECT name, lifecycle_state, COALESCE(host_kind, profile->>'host_kind') AS host_kind, overlay_address, version_running, last_seen_at,
            disconnected_since, away_from, away_until, host_away_seconds,
            inventory->'addresses' AS addresses, profile->>'wireguard' AS wireguard
       FROM nodes
     WHERE $1::text IS NULL OR name COLLATE "C" > $1::text
     ORDER BY name COLLATE "C"
     LIMIT $2::bigint`,
    [range.after ?? null, range.limit ?? null],
  );
  return rows.map((row) => {
    const lastSeen = row.last_seen_at === null ? null : new Date(row.last_seen_at);
    const judgedAs: HostKind = row.host_kind ?? 'resident';
    const disconnected = row.lifecycle_state === 'disconnected';
    const since = disconnected ? (row.disconnected_since ?? row.last_seen_at) : null;
    return {
      name: row.name,
      lifecycle_state: row.lifecycle_state,
      host_kind: row.host_kind,
      silence_bound_seconds: silenceBoundMs(judgedAs, periods) / 1000,
      address: row.overlay_address,
      version_running: row.version_running,
      last_seen_at: lastSeen === null ? null : lastSeen.toISOString(),
      last_seen: formatLastSeen(lastSeen, now),
      disconnected_since: since === null ? null : new Date(since).toISOString(),
      last_away: absence(row.away_from, row.away_until),
      host_away_seconds: row.host_away_seconds === null ? null : Number(row.host_away_seconds),
      ...overlayReach(row, overlay),
    };
  });
}

/** What a node's record says about how its tunnels come about (overlayReach reads it). */
export type ReachRow = Pick<ListedRow, 'lifecycle_state' | 'overlay_address' | 'addresses' | 'wireguard'>;

/** How a node's tunnels come about (OverlayReach); null for one not on the overlay (released or revoked: it has none). */
export function overlayReach(row: ReachRow, overlay: OverlaySettings): Pick<NodeListing, 'overlay_reach'> {
  if (row.overlay_address === null || (row.lifecycle_state !== 'enrolled' && row.lifecycle_state !== 'disconnected')) return { overlay_reach: null };
  if (row.wireguard === 'none') return { overlay_reach: 'no-wireguard' };
  if (row.addresses === null) return { overlay_reach: 'unreported' };
  const reach = nodeReach(row.addresses, overlay);
  if (reach.endpoint === undefined) return { overlay_reach: 'unreachable' };
  return { overlay_reach: reach.note === undefined ? 'direct' : 'own-network' };
}

function absence(from: Date | string | null, until: Date | string | null): NodeAbsence | null {
  if (from === null || until === null) return null;
  const start = new Date(from);
  const end = new Date(until);
  return { back_at: end.toISOString(), seconds: Math.max(0, Math.round((end.getTime() - start.getTime()) / 1000)) };
}
