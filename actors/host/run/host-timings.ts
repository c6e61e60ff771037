import type { LinkBackoff, LinkTimings } from '../../../machines/link.machine';
import { OperatorError } from '../../shared/operator-error';

/**
 * How often the running host does things and how patient it is, where it differs from the
 * defaults: the drift period (10 min), the heartbeat period (its kind's, HEARTBEAT_PERIOD_MS:
 * 30 s resident, 5 min episodic), how soon a silent connection is dead (30 s), the link
 * machine's timings and its backoff.
 */
export interface HostTimings {
  driftIntervalMs?: number;
  heartbeatMs?: number;
  deadLinkMs?: number;
  link?: Partial<LinkTimings>;
  backoff?: Partial<LinkBackoff>;
  /**
   * How long the broker must have refused the node's credentials, at every attempt and with
   * no link between, before the host takes its identity as revoked (default 10 s): long enough
   * that a broker reloading its users is not a revocation, short enough that `enrol` can follow.
   */
  revokedAfterMs?: number;
}

/**
 * The environment variable that overrides them, for tests and for watching a host closely in
 * the field: `MESH_HOST_TIMINGS="drift=2s heartbeat=5s dead_link=3s"` (comma or space
 * separated; durations in ms, s or m). Deliberately not a documented option: the defaults are
 * the product; this exists so they can be shortened where waiting is the only obstacle.
 */
export const TIMINGS_VARIABLE = 'MESH_HOST_TIMINGS';

/** MESH_HOST_TIMINGS does not read as `name=duration` pairs the host knows. */
export class HostTimingsInvalid extends OperatorError {
  constructor(problem: string, value: string) {
    super(`${TIMINGS_VARIABLE} is not understood: ${problem}`, {
      value,
      next: `set it to name=duration pairs such as "drift=2s dead_link=3s" (names: ${Object.keys(SETTERS).join(', ')}), or unset it to use the defaults`,
    });
  }
}

type Setter = (timings: HostTimings, ms: number) => void;

const SETTERS: Record<string, Setter> = {
  drift: (t, ms) => { t.driftIntervalMs = ms; },
  heartbeat: (t, ms) => { t.heartbeatMs = ms; },
  dead_link: (t, ms) => { t.deadLinkMs = ms; },
  attempt_timeout: (t, ms) => { t.link = { ...t.link, attemptTimeoutMs: ms }; },
  liveness_timeout: (t, ms) => { t.link = { ...t.link, livenessTimeoutMs: ms }; },
  standby_after: (t, ms) => { t.link = { ...t.link, standbyAfterMs: ms }; },
  settled_after: (t, ms) => { t.link = { ...t.link, settledAfterMs: ms }; },
  retry_first: (t, ms) => { t.backoff = { ...t.backoff, firstMs: ms }; },
  retry_cap: (t, ms) => { t.backoff = { ...t.backoff, capMs: ms }; },
  revoked_after: (t, ms) => { t.revokedAfterMs = ms; },
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** The timings MESH_HOST_TIMINGS sets in `env`; none when it is unset or empty. */
export function timingsFromEnvironment(env: Readonly<Record<string, string | undefined>>): HostTimings {
  const text = env[TIMINGS_VARIABLE] ?? '';
  const timings: HostTimings = {};
  for (const pair of text.split(/[\s,]+/).filter((word) => word !== '')) {
    const match = /^([a-z_]+)=(\d{1,9})(ms|s|m)$/.exec(pair);
    if (match === null) throw new HostTimingsInvalid(`"${pair}" is not name=duration (a whole number with ms, s or m)`, text);
    const [, name, amount, unit] = match as unknown as [string, string, string, string];
    const set = SETTERS[name];
    if (set === undefined) throw new HostTimingsInvalid(`there is no timing called "${name}"`, text);
    const ms = Number(amount) * (UNIT_MS[unit] as number);
    if (ms < 1) throw new HostTimingsInvalid(`"${pair}" must be at least 1 ms`, text);
    set(timings, ms);
  }
  return timings;
}
