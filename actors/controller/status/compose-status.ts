import type { Condition } from '../../../schema/condition';
import type { ControllerStatus, StatusProblem } from '../../../schema/controller-status';
import { isSilenced, sortConditions } from '../conditions/condition-store';
import type { LeaseHolder } from '../../../schema/lease-holder';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import type { DoctorSummary } from '../../../schema/doctor';
import type { BrokerCertificateStatus } from '../../../schema/broker-certificate-status';
import type { BusRepairCounts } from '../declarations/bus-repairs';
import type { LeaseGate } from '../lease/lease-gate';
import { readEpochFloor } from '../store/controller-epoch.repo';
import { countHandActs } from '../hand-acts/hand-acts.repo';
import { readDeclarationDelivery } from './read-declaration-delivery';
import { readPresence } from './read-presence';
import { reportRefusalCounts } from '../store/reports.repo';
import type { Sql } from '../store/sql-store';
import { unsealableProblems } from '../secrets/unsealable-problems';
import type { OverlaySettings } from '../declarations/overlay-endpoint';
import { DEFAULT_OVERLAY } from '../nodes/list-nodes';
import { readOverlayReach } from './read-overlay-reach';
import { failingProviderProblems, unsealableCredentialProblems } from '../provisions/provider-standing';
import { seatsWithoutHolderProblems } from '../seats/seats-left-without-holder';

/** Where status is composed from. */
export interface StatusSources {
  store: Sql;
  gate: LeaseGate;
  /** Who holds the lease now, from the bucket; null when nobody does. */
  leaseHolder(): Promise<{ holder: LeaseHolder | null; revision: number } | null>;
  /** The live supervision tree, when there is one. */
  tree(): SupervisionTreeNode | undefined;
  /** This controller, `<hostname>:<pid>`. */
  controller: string;
  /** The bus repairs made since it started (BusObjects); none shown when not given. */
  busRepairs?: () => BusRepairCounts;
  /** The doctor's last run (DoctorBoard); none shown when not given. */
  doctor?: () => DoctorSummary | null;
  /** The open conditions (ConditionStore); none shown when not given. */
  conditions?: () => Promise<Condition[]>;
  /** The broker's certificate and who pins it (brokerCertificateStatus); none shown when not given. */
  brokerCertificate?: () => Promise<BrokerCertificateStatus>;
  /** The mesh's overlay, to judge how nodes are reached; `mesh-control init`'s default unless given. */
  overlay?: OverlaySettings;
  now(): Date;
}

/** The week status counts hand acts over. */
const WEEK_MS = 7 * 24 * 3_600_000;

interface NodeProblemRow {
  name: string;
  full_held: string | null;
  release_held: string | null;
  refused: string | null;
  failed: number | null;
  deaf_since: Date | null;
  deaf_reason: string | null;
}

/**
 * Composes status: this controller's standing with the lease and who holds it, the store's
 * epoch floor, the nodes by lifecycle state and kind with those shown disconnected (a state,
 * not a problem), declarations outstanding apart from failed, the reports refused and counted, and the open
 * problems (the lease not acting, children of the tree restarting, nodes whose declarations are
 * held or were refused or failed), with when it was composed and how long that took. A source
 * that cannot be read is itself a problem, never a reason to say all is well.
 */
export async function composeStatus(sources: StatusSources): Promise<ControllerStatus> {
  const started = performance.now();
  const composedAt = sources.now();
  const problems: StatusProblem[] = [];
  const standing = sources.gate.standing();
  if (standing.state === 'quiet' || standing.state === 'lost') {
    problems.push({ kind: 'lease', subject: 'lease', detail: `this controller is ${standing.state === 'quiet' ? 'not acting' : 'no longer acting'}: ${standing.note ?? 'the lease was not renewed'}` });
  }
  const [conditions, holder, floor, byState, refusals, nodeProblems, presence, declarations, handActsWeek, reach] = await Promise.all([
    readConditions(sources, composedAt),
    sources.leaseHolder().catch((error: unknown) => {
      problems.push({ kind: 'lease', subject: 'lease', detail: `who holds the lease could not be read: ${message(error)}` });
      return null;
    }),
    readEpochFloor(sources.store),
    sources.store.query<{ lifecycle_state: string; count: number }>('SELECT lifecycle_state, count(*)::int AS count FROM nodes GROUP BY lifecycle_state ORDER BY lifecycle_state'),
    reportRefusalCounts(sources.store),
    sources.store.query<NodeProblemRow>(
      `SELECT name, full_held, release_held, report_summary->>'refused' AS refused, (report_summary->'outcomes'->>'failed')::int AS failed, deaf_since, deaf_reason
       FROM nodes
       WHERE lifecycle_state IN ('enrolled', 'disconnected')
         AND (full_held IS NOT NULL OR release_held IS NOT NULL OR report_summary->>'refused' IS NOT NULL OR deaf_since IS NOT NULL
              OR coalesce((report_summary->'outcomes'->>'failed')::int, 0) > 0)
       ORDER BY name`,
    ),
    readPresence(sources.store),
    readDeclarationDelivery(sources.store),
    countHandActs(sources.store, new Date(composedAt.getTime() - WEEK_MS)),
    readOverlayReach(sources.store, sources.overlay ?? DEFAULT_OVERLAY),
  ]);
  if (holder !== null && holder.holder === null) {
    // Only something with the controller's rights can write the key (see docs/bus-trust.md).
    problems.push({ kind: 'lease', subject: 'lease', detail: `the lease key holds a value no controller wrote (revision ${holder.revision}); no controller acts until it is deleted or expires, and whatever wrote it should be found` });
  }
  problems.push(...supervisionProblems(sources.tree()));
  for (const row of nodeProblems) problems.push(...nodeProblemsOf(row));
  problems.push(...reach.problems);
  problems.push(...(await unsealableProblems(sources.store)));
  problems.push(...(await failingProviderProblems(sources.store)), ...(await unsealableCredentialProblems(sources.store)));
  problems.push(...(await seatsWithoutHolderProblems(sources.store)));
  const repairs = sources.busRepairs?.();
  const certificate = await sources.brokerCertificate?.().catch((error: unknown) => {
    problems.push({ kind: 'certificate', subject: 'broker', detail: `the broker certificate could not be read: ${message(error)}` });
    return undefined;
  });

  const byReason: Record<string, number> = {};
  for (const refusal of refusals) byReason[refusal.reason] = (byReason[refusal.reason] ?? 0) + Number(refusal.count);
  return {
    composed_at: composedAt.toISOString(),
    took_ms: Math.round(performance.now() - started),
    controller: sources.controller,
    lease: {
      state: standing.state,
      epoch: standing.epoch,
      holder: holder?.holder?.controller ?? null,
      holder_since: holder?.holder?.taken_at ?? null,
      epoch_floor: floor?.epoch ?? null,
      note: standing.note,
    },
    nodes: {
      total: byState.reduce((sum, row) => sum + row.count, 0),
      by_state: Object.fromEntries(byState.map((row) => [row.lifecycle_state, row.count])),
      ...presence,
    },
    declarations,
    refused_reports: {
      total: Object.values(byReason).reduce((sum, count) => sum + count, 0),
      by_reason: byReason,
      by_node: refusals.map((refusal) => ({ node: refusal.node, reason: refusal.reason, count: Number(refusal.count), last_at: new Date(refusal.last_at).toISOString() })),
    },
    ...(repairs === undefined
      ? {}
      : { bus_repairs: { total: repairs.total, by_kind: { ...repairs.by_kind }, last: repairs.last === null ? null : { ...repairs.last, at: repairs.last.at.toISOString() } } }),
    ...(sources.doctor === undefined ? {} : { doctor: sources.doctor() }),
    overlay: reach.overlay,
    hand_acts_week: handActsWeek,
    problems: conditions?.unreadable == null ? problems : [{ kind: 'conditions', subject: 'conditions', detail: `the open conditions could not be read: ${conditions.unreadable}` }, ...problems],
    ...(conditions === undefined ? {} : { conditions, all_well: conditions.unreadable === null && conditions.open === 0 && problems.length === 0 }),
    ...(certificate === undefined ? {} : { broker_certificate: certificate }),
  };
}

/** The open conditions as status carries them, or why they could not be read; undefined without a source. */
async function readConditions(sources: StatusSources, now: Date): Promise<ControllerStatus['conditions']> {
  if (sources.conditions === undefined) return undefined;
  try {
    const list = sortConditions(await sources.conditions(), now);
    return {
      open: list.length,
      urgent: list.filter((condition) => condition.severity === 'urgent').length,
      silenced: list.filter((condition) => isSilenced(condition, now)).length,
      list,
      unreadable: null,
    };
  } catch (error) {
    return { open: 0, urgent: 0, silenced: 0, list: [], unreadable: message(error) };
  }
}

function supervisionProblems(tree: SupervisionTreeNode | undefined): StatusProblem[] {
  if (tree === undefined) return [];
  const problems: StatusProblem[] = [];
  const visit = (node: SupervisionTreeNode): void => {
    for (const child of node.children) {
      if (child.state === 'backingOff' || child.state === 'escalated' || child.restarts > 0) {
        const how = child.state === 'backingOff' ? 'down, waiting to be restarted' : child.state === 'escalated' ? 'given up on' : 'running again';
        problems.push({
          kind: 'supervision',
          subject: child.id,
          detail: `${how}; ${child.restarts} restart${child.restarts === 1 ? '' : 's'} lately${child.last_error === undefined ? '' : `; last error: ${child.last_error}`}`,
        });
      }
      visit(child);
    }
  };
  visit(tree);
  return problems;
}

function nodeProblemsOf(row: NodeProblemRow): StatusProblem[] {
  const problems: StatusProblem[] = [];
  if (row.full_held !== null) problems.push({ kind: 'node', subject: row.name, detail: `its full declaration is held: ${row.full_held}` });
  if (row.release_held !== null) problems.push({ kind: 'node', subject: row.name, detail: `its release is held: ${row.release_held}` });
  if (row.refused !== null) problems.push({ kind: 'node', subject: row.name, detail: `it refused its latest declaration (${row.refused})` });
  if (row.deaf_since !== null) {
    const what = row.deaf_reason === 'stream_not_found' ? 'the declaration stream' : 'its consumer';
    problems.push({ kind: 'node', subject: row.name, detail: `it cannot hear its declarations since ${new Date(row.deaf_since).toISOString()}: ${what} is gone from the broker (the read-back makes it again)` });
  }
  if ((row.failed ?? 0) > 0) problems.push({ kind: 'node', subject: row.name, detail: `${row.failed} resource${row.failed === 1 ? '' : 's'} failed in its latest report (mesh-control nodes)` });
  return problems;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
