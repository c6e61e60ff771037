import type { HostKind } from '../../../schema/resource';
import { HEARTBEAT_PERIOD_MS } from '../../shared/heartbeat/heartbeat-period';
import { OperatorError } from '../../shared/operator-error';
import type { ServeControllerOptions } from './serve-controller';

/**
 * The environment variable that shortens how `mesh-control serve` judges silence, for tests
 * of real processes and for watching a mesh closely: `MESH_CONTROLLER_TIMINGS="presence=200ms
 * heartbeat_resident=1s heartbeat_episodic=60m doctor=1m watchdog=200ms"` (doctor: how often its probes run; watchdog: how often it looks over the signals table) (comma or space separated; durations in ms, s
 * or m). Deliberately not a documented option, as MESH_HOST_TIMINGS is not: the defaults are
 * the product, and a host's period must match the controller's for its kind.
 */
export const CONTROLLER_TIMINGS_VARIABLE = 'MESH_CONTROLLER_TIMINGS';

/** MESH_CONTROLLER_TIMINGS does not read as `name=duration` pairs the controller knows. */
export class ControllerTimingsInvalid extends OperatorError {
  constructor(problem: string, value: string) {
    super(`${CONTROLLER_TIMINGS_VARIABLE} is not understood: ${problem}`, {
      value,
      next: `set it to name=duration pairs such as "presence=1s heartbeat_resident=5s" (names: ${Object.keys(SETTERS).join(', ')}), or unset it to use the defaults`,
    });
  }
}

type Timings = Pick<ServeControllerOptions, 'presenceEveryMs' | 'doctor' | 'conditions'> & { heartbeatPeriods?: Record<HostKind, number> };

const SETTERS: Record<string, (timings: Timings, ms: number) => void> = {
  presence: (t, ms) => { t.presenceEveryMs = ms; },
  heartbeat_resident: (t, ms) => { t.heartbeatPeriods = { ...(t.heartbeatPeriods ?? HEARTBEAT_PERIOD_MS), resident: ms }; },
  heartbeat_episodic: (t, ms) => { t.heartbeatPeriods = { ...(t.heartbeatPeriods ?? HEARTBEAT_PERIOD_MS), episodic: ms }; },
  doctor: (t, ms) => { t.doctor = { ...t.doctor, everyMs: ms }; },
  watchdog: (t, ms) => { t.conditions = { ...t.conditions, watchdogEveryMs: ms }; },
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** The serve options MESH_CONTROLLER_TIMINGS sets in `env`; none when it is unset or empty. */
export function controllerTimingsFromEnvironment(env: Readonly<Record<string, string | undefined>>): Timings {
  const text = env[CONTROLLER_TIMINGS_VARIABLE] ?? '';
  const timings: Timings = {};
  for (const pair of text.split(/[\s,]+/).filter((word) => word !== '')) {
    const match = /^([a-z_]+)=(\d{1,9})(ms|s|m)$/.exec(pair);
    if (match === null) throw new ControllerTimingsInvalid(`"${pair}" is not name=duration (a whole number with ms, s or m)`, text);
    const [, name, amount, unit] = match as unknown as [string, string, string, string];
    const set = SETTERS[name];
    if (set === undefined) throw new ControllerTimingsInvalid(`there is no timing called "${name}"`, text);
    const ms = Number(amount) * (UNIT_MS[unit] as number);
    if (ms < 1) throw new ControllerTimingsInvalid(`"${pair}" must be at least 1 ms`, text);
    set(timings, ms);
  }
  return timings;
}
