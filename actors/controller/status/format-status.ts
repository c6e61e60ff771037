import type { ControllerStatus } from '../../../schema/controller-status';
import { formatSpan } from '../nodes/format-span';

/** Status for a person: when it was composed and how long that took, then the lease, nodes, refusals and problems. */
export function formatStatus(status: ControllerStatus, now: Date): string {
  const age = now.getTime() - Date.parse(status.composed_at);
  const lines = [`composed ${status.composed_at} (${age < 1000 ? 'just now' : `${formatSpan(age)} ago`}) in ${status.took_ms} ms by ${status.controller}`];

  const { lease } = status;
  const holder = lease.holder === null ? 'nobody holds it' : `held by ${lease.holder}${lease.holder_since === null ? '' : ` since ${lease.holder_since}`}`;
  const standing = lease.state === 'acting' ? `acting under epoch ${lease.epoch}` : `${lease.state}${lease.note === null ? '' : ` (${lease.note})`}`;
  lines.push(`lease: ${standing}; ${holder}; epoch floor ${lease.epoch_floor ?? 'none yet'}`);

  const states = Object.entries(status.nodes.by_state).map(([state, count]) => `${count} ${state}`);
  lines.push(`nodes: ${status.nodes.total}${states.length === 0 ? '' : ` (${states.join(', ')})`}`);

  const refused = status.refused_reports;
  if (refused.total === 0) {
    lines.push('refused reports: none');
  } else {
    const reasons = Object.entries(refused.by_reason).map(([reason, count]) => `${count} ${reason}`).join(', ');
    const nodes = refused.by_node.map((entry) => `${entry.node} ${entry.reason} ${entry.count}`).join('; ');
    lines.push(`refused reports: ${refused.total} (${reasons}): ${nodes}`);
  }

  const repairs = status.bus_repairs;
  if (repairs !== undefined) {
    const kinds = Object.entries(repairs.by_kind).map(([kind, count]) => `${count} ${kind.replaceAll('_', ' ')}`).join(', ');
    const last = repairs.last === null ? '' : `; last: ${repairs.last.subject} ${repairs.last.kind.replaceAll('_', ' ')} at ${repairs.last.at}`;
    lines.push(repairs.total === 0 && kinds === '' ? 'bus repairs: none' : `bus repairs: ${repairs.total}${kinds === '' ? '' : ` (${kinds})`}${last}`);
  }

  if (status.problems.length === 0) {
    lines.push('problems: none');
  } else {
    lines.push(`problems (${status.problems.length}):`);
    for (const problem of status.problems) lines.push(`  - ${problem.kind} ${problem.subject}: ${problem.detail}`);
  }
  return lines.join('\n');
}
