import * as z from 'zod';
import { IsoTime } from './primitives';

/**
 * How one doctor probe came out: `pass`; `warn` (nothing wrong yet, but soon: a certificate
 * near its end); `fail` (it looked, and something is wrong); `cannot-run` (it could not look:
 * it timed out, threw, or could not reach what it needs). A probe that cannot run is never a
 * pass.
 */
export const ProbeVerdict = z.enum(['pass', 'warn', 'fail', 'cannot-run']);
/** See {@link ProbeVerdict}. */
export type ProbeVerdict = z.infer<typeof ProbeVerdict>;

/** One probe's outcome: what it looked at, what it found, and the next step when not a pass. */
export const ProbeResult = z.strictObject({
  /** The probe's name (`store`, `broker`, `declaration-stream`, `lease`, `certificate`…). */
  probe: z.string(),
  verdict: ProbeVerdict,
  detail: z.string(),
  /** What to do next; null on a pass. */
  next: z.string().nullable(),
});
/** See {@link ProbeResult}. */
export type ProbeResult = z.infer<typeof ProbeResult>;

/**
 * What `mesh-control doctor --json` prints: every probe's outcome, failures first, and whether
 * the serving controller answered (when it did not, only what the mesh directory alone shows
 * was probed, and the controller not running is itself a failed probe).
 */
export const DoctorReport = z.strictObject({
  at: IsoTime,
  /** `serving`: the serving controller ran the probes; `directory`: none answered, probed from the mesh directory. */
  source: z.enum(['serving', 'directory']),
  /** True when no probe failed or could not run (warnings allowed). */
  ok: z.boolean(),
  probes: z.array(ProbeResult),
});
/** See {@link DoctorReport}. */
export type DoctorReport = z.infer<typeof DoctorReport>;

/** The serving controller's last doctor run as status carries it: when, and the probes not passing. */
export const DoctorSummary = z.strictObject({
  at: IsoTime,
  failing: z.array(ProbeResult),
});
/** See {@link DoctorSummary}. */
export type DoctorSummary = z.infer<typeof DoctorSummary>;
