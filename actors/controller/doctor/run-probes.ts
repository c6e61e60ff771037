import type { DoctorReport, ProbeResult } from '../../../schema/doctor';
import { messageOf } from '../../shared/message-of';
import type { DoctorProbe } from './doctor-probe';

/** Thirty seconds (seed 003): the most one probe may take before it is said not to have run. */
export const PROBE_BOUND_MS = 30_000;

/** Failures first, then what cannot run, then warnings, then passes. */
const ORDER: Record<ProbeResult['verdict'], number> = { fail: 0, 'cannot-run': 1, warn: 2, pass: 3 };

/** Options of {@link runProbes}. */
export interface RunProbesOptions {
  /** The bound of each probe (PROBE_BOUND_MS); tests make it short. */
  boundMs?: number;
  now?: () => Date;
  source: DoctorReport['source'];
}

/**
 * Runs every probe side by side, each bounded to `boundMs`: one that throws or outlives its
 * bound is `cannot-run` with why (its signal is aborted, and whatever it still does is left to
 * finish on its own), never a pass. The report lists failures first; `ok` only when nothing
 * failed or could not run.
 */
export async function runProbes(probes: readonly DoctorProbe[], options: RunProbesOptions): Promise<DoctorReport> {
  const boundMs = options.boundMs ?? PROBE_BOUND_MS;
  const at = (options.now ?? (() => new Date()))();
  const results = await Promise.all(probes.map((probe) => runBounded(probe, boundMs)));
  const sorted = results.map((result, index) => ({ result, index })).sort((a, b) => ORDER[a.result.verdict] - ORDER[b.result.verdict] || a.index - b.index).map(({ result }) => result);
  return { at: at.toISOString(), source: options.source, ok: sorted.every((result) => result.verdict === 'pass' || result.verdict === 'warn'), probes: sorted };
}

async function runBounded(probe: DoctorProbe, boundMs: number): Promise<ProbeResult> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), boundMs);
  });
  try {
    const outcome = await Promise.race([probe.run(abort.signal), late]);
    if (outcome === 'late') {
      abort.abort(new Error(`the probe ${probe.name} outlived its bound`));
      return { probe: probe.name, verdict: 'cannot-run', detail: `did not finish within ${boundMs / 1000} s`, next: probe.whenCannotRun };
    }
    if (outcome.verdict === 'pass') return { probe: probe.name, verdict: 'pass', detail: outcome.detail, next: null };
    return { probe: probe.name, verdict: outcome.verdict, detail: outcome.detail, next: outcome.next ?? probe.whenCannotRun };
  } catch (error) {
    return { probe: probe.name, verdict: 'cannot-run', detail: `could not run: ${messageOf(error)}`, next: probe.whenCannotRun };
  } finally {
    clearTimeout(timer);
  }
}
