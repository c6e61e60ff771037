import type { HostKind } from '../../../schema/resource';
import { HEARTBEAT_PERIOD_MS, silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import type { Sql } from '../store/sql-store';

/** A node the marking found silent past its bound. */
export interface MarkedDisconnected {
  name: string;
  host_kind: HostKind;
  /** When it was last heard from (or enrolled, if never heard): when its silence began. */
  since: Date;
}

interface MarkedRow {
  name: string;
  host_kind: HostKind;
  disconnected_since: Date | string;
}

/**
 * Shows as `disconnected`, in one statement, every `enrolled` node not heard from for three of
 * its kind's heartbeat periods (`periods`, production's unless given) by `now`, keeping since
 * when it has been silent. A node's kind is what its latest heartbeat said, else its profile at
 * enrolment, else resident (the shorter bound: a node of no known kind is not given longer).
 *
 * Silence is counted from `listeningSince` at the earliest: when this controller began taking
 * heartbeats. A controller that starts after an hour down (or takes over from one that
 * stopped) has heard nothing for that hour from nodes that were beating all along; the gap is
 * its own, not theirs. Since when a marked node was silent is still when it was last heard.
 *
 * Fenced like every write of the acting controller: nothing is written once a controller under
 * a later epoch than `epoch` has raised the store's floor. Returns the nodes marked.
 */
export async function markDisconnected(
  sql: Sql,
  now: Date,
  epoch: number,
  periods: Readonly<Record<HostKind, number>> = HEARTBEAT_PERIOD_MS,
  listeningSince: Date = new Date(0),
): Promise<MarkedDisconnected[]> {
  const rows = await sql.query<MarkedRow>(
    `WITH judged AS (
       SELECT name,
              CASE WHEN COALESCE(host_kind, profile->>'host_kind') = 'episodic' THEN 'episodic' ELSE 'resident' END AS kind,
              COALESCE(last_seen_at, enrolled_at, created_at) AS heard_at
         FROM nodes WHERE lifecycle_state = 'enrolled'
     )
     UPDATE nodes n SET lifecycle_state = 'disconnected', disconnected_since = judged.heard_at, updated_at = $1
       FROM judged
      WHERE n.name = judged.name AND n.lifecycle_state = 'enrolled'
        AND GREATEST(judged.heard_at, $5::timestamptz) < $1::timestamptz - (CASE judged.kind WHEN 'episodic' THEN $3::double precision ELSE $2::double precision END) * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM controller_epoch WHERE epoch > $4)
      RETURNING n.name, judged.kind AS host_kind, n.disconnected_since`,
    [now, silenceBoundMs('resident', periods), silenceBoundMs('episodic', periods), epoch, listeningSince],
  );
  return rows.map((row) => ({ name: row.name, host_kind: row.host_kind, since: new Date(row.disconnected_since) })).sort((a, b) => (a.name < b.name ? -1 : 1));
}
