import { DoctorReport } from '../../../schema/doctor';
import { shellWord } from '../config/shell-word';
import { messageOf } from '../../shared/message-of';
import { loadControllerConfig } from '../config/load-controller-config';
import { meshDirLayout } from '../config/mesh-dir-layout';
import { callController } from '../control/call-controller';
import { ControlBrokerUnreachable, ControllerDidNotAnswer, ControllerNotRunning, ControllerRefused, ControlReplyMalformed } from '../control/control-errors';
import { directoryProbes } from './directory-probes';
import { PROBE_BOUND_MS, runProbes } from './run-probes';

/** Options of {@link askDoctor}. */
export interface AskDoctorOptions {
  /** How long to wait for a serving controller to answer at all (10 s). */
  answerWithinMs?: number;
  /** Each probe's bound when probing from the directory (PROBE_BOUND_MS). */
  boundMs?: number;
  now?: () => Date;
}

/**
 * The doctor as `mesh-control doctor` gives it: asked of the serving controller over the bus
 * (first whether one answers at all, so a mesh without one is told so in seconds, then the
 * doctor, which may take a probe's bound), and, when none answers, probed from the mesh
 * directory alone, saying plainly that the controller is not running. A mesh directory that
 * cannot be read is thrown as its own operator error: there is nothing to probe.
 */
export async function askDoctor(dir: string, options: AskDoctorOptions = {}): Promise<DoctorReport> {
  const layout = meshDirLayout(dir);
  const config = await loadControllerConfig(layout.dir);
  const report = await probe(layout.dir, layout.meshFile, config, options);
  // The probes name the mesh directory DIR; the person asked about this one.
  const word = shellWord(layout.dir);
  return { ...report, probes: report.probes.map((result) => ({ ...result, next: result.next?.replace(/\bDIR\b/g, word) ?? null })) };
}

async function probe(dir: string, meshFile: string, config: Awaited<ReturnType<typeof loadControllerConfig>>, options: AskDoctorOptions): Promise<DoctorReport> {
  const boundMs = options.boundMs ?? PROBE_BOUND_MS;
  let why: string;
  try {
    await callController(dir, 'tree', {}, { timeoutMs: options.answerWithinMs ?? 10_000 });
    const answer = await callController(dir, 'doctor', {}, { timeoutMs: PROBE_BOUND_MS + 15_000 });
    const report = DoctorReport.safeParse(answer.result);
    if (report.success) return report.data;
    why = `its answer to doctor is not a doctor's report: ${report.error.issues[0]?.message ?? 'malformed'}`;
  } catch (error) {
    if (!(error instanceof ControllerDidNotAnswer || error instanceof ControllerNotRunning || error instanceof ControlBrokerUnreachable || error instanceof ControllerRefused || error instanceof ControlReplyMalformed)) throw error;
    why = messageOf(error);
  }
  const probing = directoryProbes(meshFile, config, why, options.now);
  try {
    return await runProbes(probing.probes, { source: 'directory', boundMs, ...(options.now === undefined ? {} : { now: options.now }) });
  } finally {
    await probing.close();
  }
}
