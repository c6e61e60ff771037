import * as z from 'zod';
import { Condition } from './condition';
import { BrokerCertificateStatus } from './broker-certificate-status';
import { DoctorSummary } from './doctor';
import { Count, IsoTime } from './primitives';
import { HostKind } from './resource';

/** How many nodes status names in each of its lists (disconnected, outstanding, failed); `mesh-control nodes` has them all. */
export const STATUS_LIST_MAX = 20;

/** Something a person should look at, said once: what kind, about what, and what is wrong. */
export const StatusProblem = z.strictObject({
  /** `lease`, `supervision`, `node`. */
  kind: z.string(),
  /** What it is about: a node's name, a child of the supervision tree, `lease`. */
  subject: z.string(),
  detail: z.string(),
});
/** See {@link StatusProblem}. */
export type StatusProblem = z.infer<typeof StatusProblem>;

/**
 * What `mesh-control status --json` prints: the serving controller's last composition of the
 * mesh, with when it was composed and how long composing took. The controller composes it at
 * start, after news from a node, after an acting verb and every minute, and the verb answers
 * the last one at once.
 */
export const ControllerStatus = z.strictObject({
  composed_at: IsoTime,
  took_ms: z.number().min(0),
  /** The controller that composed it (`<hostname>:<pid>`). */
  controller: z.string(),
  lease: z.strictObject({
    /** This controller's standing: acting, quiet, standing by, stopped or lost. */
    state: z.enum(['acting', 'quiet', 'standing by', 'stopped', 'lost']),
    /** The epoch this controller acts under; null if it never held the lease. */
    epoch: z.number().int().nullable(),
    /** Who holds the lease now, as its key says; null when nobody does. */
    holder: z.string().nullable(),
    holder_since: IsoTime.nullable(),
    /** The highest epoch any controller has acted under, as the store keeps it. */
    epoch_floor: z.number().int().nullable(),
    /** Why this controller is not acting, when it is not. */
    note: z.string().nullable(),
  }),
  nodes: z.strictObject({
    total: Count,
    /** Node records by lifecycle state (enrolled, disconnected, revoked, released). */
    by_state: z.record(z.string(), Count),
    /**
     * Nodes holding an identity by host kind (resident, episodic; `unknown` before one said):
     * a reader needs the kind to know what a node's silence says.
     */
    by_kind: z.record(z.string(), Count),
    /**
     * The nodes shown disconnected (silent for three heartbeat periods of their kind), longest
     * away first, at most STATUS_LIST_MAX of them: since when. A state, never a problem.
     */
    disconnected: z.array(z.strictObject({ node: z.string(), host_kind: HostKind.nullable(), since: IsoTime.nullable() })),
  }),
  /**
   * Declarations in two kinds that are not to be confused: outstanding (sent, and the node has
   * not reported on it yet: ordinary for a node away, and for an episodic host for long) and
   * failed (the node reported on it, and something in it failed or it was refused). Counts of
   * each, and the nodes, oldest first, at most STATUS_LIST_MAX of them.
   */
  declarations: z.strictObject({
    outstanding: z.strictObject({
      count: Count,
      nodes: z.array(z.strictObject({ node: z.string(), host_kind: HostKind.nullable(), lifecycle_state: z.string(), generation: z.number().int(), sent_at: IsoTime })),
    }),
    failed: z.strictObject({
      count: Count,
      nodes: z.array(z.strictObject({ node: z.string(), generation: z.number().int(), failed: Count, refused: z.string().nullable(), reported_at: IsoTime.nullable() })),
    }),
  }),
  /** Reports refused and counted: older than the node's latest, duplicates, malformed… */
  refused_reports: z.strictObject({
    total: Count,
    by_reason: z.record(z.string(), Count),
    by_node: z.array(z.strictObject({ node: z.string(), reason: z.string(), count: Count, last_at: IsoTime })),
  }),
  /**
   * The bus objects this controller put right since it started: the declaration stream, nodes'
   * consumers, slots sent again after a read-back or a node's refusal, and re-sends held back
   * for a node that kept refusing (counted by kind, not in the total). Absent from a status
   * composed without them.
   */
  bus_repairs: z
    .strictObject({
      total: Count,
      by_kind: z.record(z.string(), Count),
      last: z.strictObject({ kind: z.string(), subject: z.string(), detail: z.string(), at: IsoTime }).nullable(),
    })
    .optional(),
  /**
   * The serving controller's last doctor run (every five minutes): when, and the probes that did
   * not pass. Null before the first run ends; absent from a status composed without it.
   */
  doctor: DoctorSummary.nullable().optional(),
  /**
   * The nodes on the overlay whose tunnels are not made the ordinary way, at most
   * STATUS_LIST_MAX named of each (`mesh-control nodes` says it of every node): `unreachable`,
   * no address another node can dial (behind NAT?: it opens its tunnels); `unreported`, its host
   * said no addresses; `no_wireguard`, no WireGuard on the machine, so no tunnel at all. Two
   * unreachable nodes cannot reach each other: that is a problem. Absent from an older status.
   */
  overlay: z
    .strictObject({
      unreachable: z.strictObject({ count: Count, nodes: z.array(z.string()) }),
      unreported: z.strictObject({ count: Count, nodes: z.array(z.string()) }),
      no_wireguard: z.strictObject({ count: Count, nodes: z.array(z.string()) }),
    })
    .optional(),
  /** Hand acts recorded in the seven days before composing (`mesh-control hand-acts` lists them and the causes that came back). */
  hand_acts_week: Count,
  /** The broker's certificate: expiry, a rotation under way, nodes pinning only the old one. Absent from a status composed without it. */
  broker_certificate: BrokerCertificateStatus.optional(),
  /** Open problems, most pressing first; empty when all is well. */
  problems: z.array(StatusProblem),
  /**
   * The open conditions of the condition store, urgent first, silenced after the unsilenced
   * (each with its silence): how many, how many urgent and silenced, and `unreadable` saying why
   * when the store could not be read (then `list` is empty and nothing is well). Absent from a
   * status composed without them.
   */
  conditions: z
    .strictObject({
      open: Count,
      urgent: Count,
      silenced: Count,
      list: z.array(Condition),
      unreadable: z.string().nullable(),
    })
    .optional(),
  /** True only when the conditions were read and none is open, and no problem is open. */
  all_well: z.boolean().optional(),
});
/** See {@link ControllerStatus}. */
export type ControllerStatus = z.infer<typeof ControllerStatus>;
