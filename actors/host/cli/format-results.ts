import type { ResourceResult } from '../../../schema/report';
import type { PassReport } from '../reconcile/reconcile-pass';
import { formatTable } from '../profile/format-table';

/** A pass as a person reads it: one line per resource, then the counts. */
export function formatPass(report: PassReport): string {
  if (report.results.length === 0) return 'nothing declared and nothing owned: nothing to do';
  const rows = report.results.map((result) => [result.outcome, result.key, oneLine(result)]);
  const counts = Object.entries(report.counts).map(([outcome, count]) => `${count} ${outcome}`).join(', ');
  return `${formatTable(rows)}\n${counts} (${Math.round(report.durationMs)} ms)`;
}

/** True when any resource failed: the verb exits non-zero so a script notices. */
export function anyFailed(report: PassReport): boolean {
  return report.results.some((result) => result.outcome === 'failed');
}

function oneLine(result: ResourceResult): string {
  const detail = (result.detail ?? '').replace(/\s+/g, ' ').trim();
  return detail.length > 100 ? `${detail.slice(0, 99)}…` : detail;
}
