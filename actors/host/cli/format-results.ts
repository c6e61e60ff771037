import type { ResourceResult } from '../../../schema/report';
import type { PassPlan } from '../reconcile/plan-pass';
import type { PassReport } from '../reconcile/reconcile-pass';
import { formatTable } from '../../shared/cli/format-table';

/** A pass as a person reads it: one line per resource, then the counts. */
export function formatPass(report: PassReport): string {
  if (report.results.length === 0) return 'nothing declared and nothing owned: nothing to do';
  const rows = report.results.map((result) => [result.outcome, result.key, oneLine(result)]);
  const counts = Object.entries(report.counts).map(([outcome, count]) => `${count} ${outcome}`).join(', ');
  const unresolved = (report.unresolved ?? []).length === 0
    ? ''
    : `\nadoption could not keep or read ${report.unresolved!.join(', ')}: see \`nox-mesh-host briefing\``;
  return `${formatTable(rows)}\n${counts} (${Math.round(report.durationMs)} ms)${unresolved}`;
}

/** A dry run as a person reads it: what would change, one line per resource, then the counts. */
export function formatPlan(plan: PassPlan): string {
  if (plan.results.length === 0) return 'dry run: nothing declared and nothing owned: nothing would change';
  const rows = plan.results.map((result) => [label(result.change), result.key, oneLine(result)]);
  const counts = Object.entries(plan.counts).map(([change, count]) => `${count} ${label(change)}`).join(', ');
  return `${formatTable(rows)}\n${counts}\ndry run: nothing was changed`;
}

function label(change: string): string {
  return change === 'none' ? 'unchanged' : change === 'refused' || change === 'unreadable' ? change : `would ${change}`;
}

function oneLine(result: Pick<ResourceResult, 'detail'>): string {
  const detail = (result.detail ?? '').replace(/\s+/g, ' ').trim();
  return detail.length > 100 ? `${detail.slice(0, 99)}…` : detail;
}
