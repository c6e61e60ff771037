import { FIRST_REPORT_WAIT_MS } from '../../../machines/plan.machine';
import type { HostKind } from '../../../schema/resource';
import { HEARTBEAT_PERIOD_MS } from '../../shared/heartbeat/heartbeat-period';
import { DOCTOR_EVERY_MS } from '../doctor/doctor.part';

/** The bounds of the signals table; production's are WATCHDOG_SETTINGS, tests shorten them. */
export interface WatchdogSettings {
  /** Each kind's heartbeat period: a node is silent past three of them. */
  periods: Readonly<Record<HostKind, number>>;
  /** How long after a send a resident node heard from must have reported on it. */
  reportAfterSendMs: number;
  /** How long a call may run before it is hung. */
  callHungMs: number;
  /** How often the doctor runs: its last run older than three of these is the doctor silent. */
  doctorEveryMs: number;
  /** How long the event loop may be held up before the controller is deaf. */
  eventLoopDeafMs: number;
  /**
   * How long a plan may stay in one tier (sending, awaiting its first machine's report, stopped
   * for a person) before it is late: half the first machine's wait, so a person hears of a
   * silent first machine before the plan stops for it.
   */
  planTierLateMs: number;
  /** How long a node's reports may go on being refused as stale, none kept, before it is raised. */
  staleRefusalsMs: number;
}

/** Production's bounds. */
export const WATCHDOG_SETTINGS: WatchdogSettings = Object.freeze({
  periods: HEARTBEAT_PERIOD_MS,
  reportAfterSendMs: 15 * 60_000,
  callHungMs: 10 * 60_000,
  doctorEveryMs: DOCTOR_EVERY_MS,
  eventLoopDeafMs: 5_000,
  planTierLateMs: FIRST_REPORT_WAIT_MS / 2,
  staleRefusalsMs: 10 * 60_000,
});
