import type { DoctorReport } from '../../../schema/doctor';

/**
 * The doctor's report for a person: one line per probe, failures first (as the report orders
 * them), each not passing with its next step, then one line saying what it adds up to.
 */
export function formatDoctor(report: DoctorReport, now: Date): string {
  const width = Math.max(...report.probes.map((result) => result.probe.length), 0);
  const lines = report.probes.map((result) => {
    const head = `${result.verdict.toUpperCase().padEnd(10)} ${result.probe.padEnd(width)}  ${result.detail}`;
    return result.next === null ? head : `${head}; next: ${result.next}`;
  });
  const notPassing = report.probes.filter((result) => result.verdict === 'fail' || result.verdict === 'cannot-run').length;
  const age = Math.max(0, Math.round((now.getTime() - Date.parse(report.at)) / 1000));
  const by = report.source === 'serving' ? 'by the serving controller' : 'from the mesh directory alone (no serving controller answered)';
  lines.push(notPassing === 0 ? `all ${report.probes.length} probes pass, run ${by} ${age} s ago` : `${notPassing} of ${report.probes.length} probes fail or cannot run, run ${by} ${age} s ago`);
  return lines.join('\n');
}
