import type { ConditionSeverity } from '../../../schema/condition';
import { silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import { formatSpan } from '../nodes/format-span';
import type { Finding } from './condition-store';
import type { WatchdogSettings } from './watchdog-settings';
import type { BusAdvisory, OpenPlan, StaleRefusal, WatchdogView } from './watchdog-view';

/**
 * One row of the signals table: a signal the watchdog looks for every loop, the kind of
 * condition it raises, and how it looks. `look` returns every finding that holds now; an open
 * condition of the row's kind not among them is cleared. A `look` that throws cannot see: the
 * watchdog raises `probe-failed.<kind>` and clears nothing of the row.
 */
export interface SignalRow {
  /** The seed's number (`S1`). */
  signal: string;
  /** The kind of condition raised (`heartbeat-silent`), the first part of its id. */
  kind: string;
  /** What is watched, for a person. */
  watches: string;
  /** The bound past which it is raised, for a person. */
  bound(settings: WatchdogSettings): string;
  look(view: WatchdogView, now: Date, settings: WatchdogSettings): Promise<Finding[]>;
  /**
   * Whether a condition's absence from `look` is evidence that it no longer holds; true unless
   * given. False while the row cannot yet tell (a controller just started has not watched a
   * node's silence for a whole bound, the doctor has not run yet): its open conditions, perhaps
   * raised by the controller before a restart, are then kept, not cleared.
   */
  canClear?(view: WatchdogView, now: Date, settings: WatchdogSettings): Promise<boolean>;
}

function finding(row: Pick<SignalRow, 'signal' | 'kind'>, subject: string, severity: ConditionSeverity, detail: string, show: string): Finding {
  return { id: `${row.kind}.${subject}`, kind: row.kind, signal: row.signal, subject, severity, detail, show };
}

/** S1: a resident node silent for three heartbeat periods. Episodic hosts are excepted: their silence is their nature. */
const heartbeat: SignalRow = {
  signal: 'S1',
  kind: 'heartbeat-silent',
  watches: 'every resident node\'s heartbeats (episodic hosts excepted)',
  bound: (settings) => `3 heartbeat periods of a resident host (${formatSpan(silenceBoundMs('resident', settings.periods))})`,
  canClear: async (view, now, settings) => now.getTime() - view.watchingSince().getTime() > silenceBoundMs('resident', settings.periods),
  look: async (view, now, settings) => {
    const since = view.watchingSince().getTime();
    return (await view.heardNodes())
      .filter((node) => node.kind === 'resident')
      .filter((node) => now.getTime() - Math.max(node.heardAt.getTime(), since) > silenceBoundMs('resident', settings.periods))
      .map((node) => finding(heartbeat, node.name, 'warning', `node ${node.name} has sent no heartbeat since ${node.heardAt.toISOString()} (bound ${formatSpan(silenceBoundMs('resident', settings.periods))})`, `mesh-control nodes ${node.name}`));
  },
};

/** S2: a resident node heard from that has not reported on the declaration sent to it. */
const reportAfterSend: SignalRow = {
  signal: 'S2',
  kind: 'report-overdue',
  watches: 'a report after every send to a resident node that is heard from',
  bound: (settings) => `${formatSpan(settings.reportAfterSendMs)} after the send`,
  look: async (view, now, settings) =>
    (await view.unreportedSends())
      // A node away is S1's; an episodic host reports when its platform lets it run.
      .filter((send) => send.kind === 'resident' && send.lifecycleState === 'enrolled')
      .filter((send) => now.getTime() - send.sentAt.getTime() > settings.reportAfterSendMs)
      .map((send) => finding(reportAfterSend, send.node, 'warning', `node ${send.node} has not reported on generation ${send.generation}, sent ${send.sentAt.toISOString()} (bound ${formatSpan(settings.reportAfterSendMs)})`, `mesh-control nodes ${send.node}`)),
};

/** S3: a plan staying in one tier past its bound: sending, awaiting its first machine's report, or stopped for a person. Held plans (policy record) wait for pushes by design. */
const planLate: SignalRow = {
  signal: 'S3',
  kind: 'plan-tier-late',
  watches: 'every open plan\'s tier (sending, awaiting its first machine, stopped for a person)',
  bound: (settings) => `${formatSpan(settings.planTierLateMs)} in one tier`,
  look: async (view, now, settings) =>
    (await view.openPlans())
      .filter((plan) => plan.state !== 'held')
      .filter((plan) => now.getTime() - plan.tierSince.getTime() > settings.planTierLateMs)
      .map((plan) => finding(planLate, String(plan.id), 'warning', planLateDetail(plan, settings), `mesh-control plans show ${plan.id}`)),
};

function planLateDetail(plan: OpenPlan, settings: WatchdogSettings): string {
  const what = `plan ${plan.id} (${plan.module} ${plan.version})`;
  const since = plan.tierSince.toISOString();
  const bound = `bound ${formatSpan(settings.planTierLateMs)}`;
  if (plan.state === 'awaitingFirst') return `${what} has waited since ${since} for its first machine, ${plan.first ?? '(none)'}, to report on the send; the rest are not sent until it does (${bound})`;
  if (plan.state === 'stopped') return `${what} stopped at ${since} and waits for a person: ${plan.note ?? 'no reason kept'}; retry or close it (mesh-control plans retry ${plan.id}, or plans close ${plan.id}) (${bound})`;
  return `${what} has been ${plan.state} since ${since} without finishing (${bound})`;
}

/** S4: the controller's own event loop held up: it hears nothing while it is. */
const eventLoop: SignalRow = {
  signal: 'S4',
  kind: 'event-loop-deaf',
  watches: 'the controller\'s event loop',
  bound: (settings) => `held up ${formatSpan(settings.eventLoopDeafMs)}`,
  look: async (view, _now, settings) => {
    const held = await view.eventLoopHeldMs();
    return held > settings.eventLoopDeafMs
      ? [finding(eventLoop, 'controller', 'urgent', `the controller's event loop was held up past ${formatSpan(settings.eventLoopDeafMs)} since the watchdog's last look; it heard nothing meanwhile`, 'mesh-control status (and the machine\'s load)')]
      : [];
  },
};

/** S7: an acting verb's call running past its bound. */
const callHung: SignalRow = {
  signal: 'S7',
  kind: 'call-hung',
  watches: 'every acting verb\'s call',
  bound: (settings) => `running ${formatSpan(settings.callHungMs)}`,
  look: async (view, now, settings) =>
    (await view.runningCalls())
      .filter((call) => now.getTime() - call.startedAt.getTime() > settings.callHungMs)
      .map((call) => finding(callHung, call.id, 'warning', `the call ${call.id} (${call.verb}) has run since ${call.startedAt.toISOString()} (bound ${formatSpan(settings.callHungMs)})`, `mesh-control calls ${call.id}`)),
};

/**
 * S9: the broker's advisories on the declaration stream, each held while it still holds by
 * observation. A slow consumer is not among them: nats-server 2.9 publishes no advisory of it to
 * an account, and nats.js notices one only on iterator subscriptions given a `slow` bound, which
 * the controller's (callbacks) are not; the broker cutting a slow controller off is the bus
 * child failing, restarted by its supervisor.
 */
const busAdvisory: SignalRow = {
  signal: 'S9',
  kind: 'bus-advisory',
  watches: 'the broker\'s advisories: a node\'s declaration at its maximum deliveries, a node\'s consumer deleted',
  bound: () => 'heard from the broker and still so at the next look',
  look: async (view, now) =>
    (await view.busAdvisories())
      .filter((advisory) => advisory.at.getTime() <= now.getTime())
      .map((advisory) => finding(busAdvisory, `${advisory.kind}.${advisoryKey(advisory.about)}`, advisory.kind === 'consumer-deleted' ? 'urgent' : 'warning', advisoryDetail(advisory), advisoryShow(advisory))),
};

/** A node name as a condition id's part (a node name is one already; anything else becomes `_`). */
function advisoryKey(about: string): string {
  return about.replace(/[^A-Za-z0-9_-]/g, '_');
}

function advisoryDetail(advisory: BusAdvisory): string {
  const at = advisory.at.toISOString();
  switch (advisory.kind) {
    case 'max-deliveries':
      return `the broker gave up delivering node ${advisory.about} its declaration at ${at}: ${advisory.detail}; it has kept no report from the node since`;
    case 'consumer-deleted':
      return `node ${advisory.about}'s declaration consumer was deleted at ${at} and is not there again: the node is sent nothing until it is (${advisory.detail})`;
  }
}

function advisoryShow(advisory: BusAdvisory): string {
  switch (advisory.kind) {
    case 'max-deliveries':
      return `mesh-control nodes ${advisory.about}; mesh-control push ${advisory.about} --why TEXT`;
    case 'consumer-deleted':
      return 'mesh-control doctor (the read-back makes the consumer again within five minutes)';
  }
}

/** S10 and the doctor's probes: a probe failing or unable to run in the last run, and the doctor itself silent. */
const doctor: SignalRow = {
  signal: 'S10',
  kind: 'doctor-failing',
  watches: 'the doctor\'s last run: each probe, and that it ran',
  bound: (settings) => `a probe not passing in the last run; no run for ${formatSpan(3 * settings.doctorEveryMs)}`,
  canClear: async (view) => (await view.doctorLast()) !== undefined,
  look: async (view, now, settings) => {
    const last = await view.doctorLast();
    const since = last === undefined ? view.watchingSince().getTime() : Date.parse(last.at);
    const found: Finding[] = [];
    if (now.getTime() - since > 3 * settings.doctorEveryMs) {
      found.push(finding(doctor, 'doctor', 'warning', `the doctor has not run since ${new Date(since).toISOString()} (it runs every ${formatSpan(settings.doctorEveryMs)})`, 'mesh-control tree; mesh-control doctor'));
    }
    for (const probe of last?.probes ?? []) {
      if (probe.verdict === 'pass' || probe.verdict === 'warn') continue;
      found.push(finding(doctor, probe.probe, probe.verdict === 'fail' ? 'urgent' : 'warning', `the doctor's probe ${probe.probe} ${probe.verdict === 'fail' ? 'fails' : 'cannot run'}: ${probe.detail}`, probe.next ?? 'mesh-control doctor'));
    }
    return found;
  },
};

/**
 * S13: a node's reports refused as stale (older than one kept, or a replay of one) for longer
 * than the bound with none kept since: its host's numbering went back (a state restored from an
 * old copy) or something replays its reports, and the controller hears nothing new from it. One
 * replay just after a kept report is normal (a redelivery) and stays inside the bound.
 */
const staleRefusals: SignalRow = {
  signal: 'S13',
  kind: 'reports-refused',
  watches: 'every node\'s reports refused as stale (older, duplicate) with none kept since',
  bound: (settings) => `refused for ${formatSpan(settings.staleRefusalsMs)} with none kept`,
  look: async (view, _now, settings) =>
    onePerNode((await view.staleRefusals())
      .filter((refusal) => refusal.lastAt.getTime() - refusal.since.getTime() > settings.staleRefusalsMs))
      .map((refusal) => finding(staleRefusals, refusal.node, 'warning', `node ${refusal.node}'s reports have been refused as ${refusal.reason === 'older' ? 'older than one kept' : 'replays of one kept'} from ${refusal.since.toISOString()} to ${refusal.lastAt.toISOString()} with none kept between (${refusal.count} so refused in all; bound ${formatSpan(settings.staleRefusalsMs)}): the controller hears nothing new from it`, `mesh-control nodes ${refusal.node}; mesh-control status`)),
};

/** The first of each node's stale refusals (older before duplicate): one condition per node. */
function onePerNode(refusals: StaleRefusal[]): StaleRefusal[] {
  const seen = new Set<string>();
  return refusals.filter((refusal) => !seen.has(refusal.node) && seen.add(refusal.node));
}

/** The signals table: the watchdog's rows, in the order it looks. */
export const SIGNALS: readonly SignalRow[] = [heartbeat, reportAfterSend, planLate, eventLoop, callHung, busAdvisory, doctor, staleRefusals];

/** The seed's rows not watched yet, each with why (none now: S3, S9 and S13 are watched). */
export const DEFERRED_SIGNALS: Readonly<Record<string, string>> = {};

/** The kind of condition raised for a row that cannot see. */
export const PROBE_FAILED = 'probe-failed';
