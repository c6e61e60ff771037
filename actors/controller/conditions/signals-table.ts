import type { ConditionSeverity } from '../../../schema/condition';
import { silenceBoundMs } from '../../shared/heartbeat/heartbeat-period';
import { formatSpan } from '../nodes/format-span';
import type { Finding } from './condition-store';
import type { WatchdogSettings } from './watchdog-settings';
import type { WatchdogView } from './watchdog-view';

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

/** The signals table: the watchdog's rows, in the order it looks. */
export const SIGNALS: readonly SignalRow[] = [heartbeat, reportAfterSend, eventLoop, callHung, doctor];

/** The seed's rows not watched yet, each with why. */
export const DEFERRED_SIGNALS: Readonly<Record<string, string>> = {
  S3: 'plan tier late: plans keep no per-tier deadline yet to be late against',
  S9: 'the bus\'s advisories (maximum deliveries, a mesh consumer deleted, a slow consumer): the controller\'s user is not yet subscribed to $JS.EVENT.ADVISORY; the doctor\'s consumer probe and the read-back see a deleted consumer meanwhile',
  S13: 'stale refusals: refusals are counted without the time of each, so "stale" has nothing to be measured against',
};

/** The kind of condition raised for a row that cannot see. */
export const PROBE_FAILED = 'probe-failed';
