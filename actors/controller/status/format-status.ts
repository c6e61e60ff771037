import type { ControllerStatus } from '../../../schema/controller-status';
import { conditionLine } from '../conditions/format-conditions';
import { formatSpan } from '../nodes/format-span';
import { formatBrokerCertificate } from '../broker/broker-certificate-status';

/**
 * Status for a person, led by the open conditions (urgent first; "all well" only when none is
 * open, none could not be read and no problem is open); then when it was composed and how long that took, the lease, nodes (by
 * state and kind, and those away), declarations outstanding apart from failed, refusals and
 * problems.
 */
export function formatStatus(status: ControllerStatus, now: Date): string {
  const age = now.getTime() - Date.parse(status.composed_at);
  const lines = [...conditionsLead(status, now), `composed ${status.composed_at} (${age < 1000 ? 'just now' : `${formatSpan(age)} ago`}) in ${status.took_ms} ms by ${status.controller}`];

  const { lease } = status;
  const holder = lease.holder === null ? 'nobody holds it' : `held by ${lease.holder}${lease.holder_since === null ? '' : ` since ${lease.holder_since}`}`;
  const standing = lease.state === 'acting' ? `acting under epoch ${lease.epoch}` : `${lease.state}${lease.note === null ? '' : ` (${lease.note})`}`;
  lines.push(`lease: ${standing}; ${holder}; epoch floor ${lease.epoch_floor ?? 'none yet'}`);

  const states = Object.entries(status.nodes.by_state).map(([state, count]) => `${count} ${state}`);
  const kinds = Object.entries(status.nodes.by_kind).map(([kind, count]) => `${count} ${kind}`);
  lines.push(`nodes: ${status.nodes.total}${states.length === 0 ? '' : ` (${states.join(', ')})`}${kinds.length === 0 ? '' : `; holding an identity: ${kinds.join(', ')}`}`);
  const away = status.nodes.by_state.disconnected ?? 0;
  if (away > 0) {
    const named = status.nodes.disconnected.map((node) => `${node.node} (${node.host_kind ?? 'kind unknown'}) ${node.since === null ? 'never heard from' : `since ${node.since}, ${formatSpan(now.getTime() - Date.parse(node.since))}`}`);
    lines.push(`disconnected: ${away}: ${named.join('; ')}${more(away, named.length)}`);
  }

  const { outstanding, failed } = status.declarations;
  if (outstanding.count === 0) {
    lines.push('declarations outstanding (sent, not yet reported): none');
  } else {
    const named = outstanding.nodes.map((node) => `${node.node} (${node.host_kind ?? 'kind unknown'}, ${node.lifecycle_state}) generation ${node.generation} sent ${formatSpan(now.getTime() - Date.parse(node.sent_at))} ago`);
    lines.push(`declarations outstanding (sent, not yet reported): ${outstanding.count}: ${named.join('; ')}${more(outstanding.count, named.length)}`);
  }
  if (failed.count === 0) {
    lines.push('declarations failed (reported): none');
  } else {
    const named = failed.nodes.map((node) => `${node.node} generation ${node.generation} ${node.refused === null ? `${node.failed} resource${node.failed === 1 ? '' : 's'} failed` : `refused (${node.refused})`}`);
    lines.push(`declarations failed (reported): ${failed.count}: ${named.join('; ')}${more(failed.count, named.length)}`);
  }

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

  if (status.broker_certificate !== undefined) lines.push(formatBrokerCertificate(status.broker_certificate, now));
  if (status.doctor !== undefined) {
    const { doctor } = status;
    lines.push(doctor === null
      ? 'doctor: not run yet'
      : `doctor: ${doctor.failing.length === 0 ? 'every probe passes' : doctor.failing.map((probe) => `${probe.probe} ${probe.verdict}`).join(', ')} (run ${formatSpan(Math.max(0, now.getTime() - Date.parse(doctor.at)))} ago; mesh-control doctor)`);
  }

  if (status.overlay !== undefined) lines.push(overlayLine(status.overlay));

  lines.push(`hand acts this week: ${status.hand_acts_week === 0 ? 'none' : `${status.hand_acts_week} (mesh-control hand-acts lists them and the causes that came back)`}`);

  if (status.problems.length === 0) {
    lines.push('problems: none');
  } else {
    lines.push(`problems (${status.problems.length}):`);
    for (const problem of status.problems) lines.push(`  - ${problem.kind} ${problem.subject}: ${problem.detail}`);
  }
  return lines.join('\n');
}

function conditionsLead(status: ControllerStatus, now: Date): string[] {
  const { conditions } = status;
  if (conditions === undefined) return [];
  if (conditions.unreadable !== null) return [`NOT WELL: the open conditions could not be read (${conditions.unreadable}); mesh-control conditions, mesh-control doctor`];
  if (conditions.open === 0) return [status.problems.length === 0 ? 'all well: no condition open, no problem' : `no condition open, but ${status.problems.length} problem${status.problems.length === 1 ? '' : 's'} below`];
  const counts = [conditions.urgent > 0 ? `${conditions.urgent} urgent` : '', conditions.silenced > 0 ? `${conditions.silenced} silenced` : ''].filter((part) => part !== '');
  return [`NOT WELL: ${conditions.open} condition${conditions.open === 1 ? '' : 's'} open${counts.length === 0 ? '' : ` (${counts.join(', ')})`}:`, ...conditions.list.map((condition) => `  ${conditionLine(condition, now)}`)];
}

// How the overlay's nodes are reached, where that is not the ordinary way; each word as `mesh-control nodes` says it.
function overlayLine(overlay: NonNullable<ControllerStatus['overlay']>): string {
  const parts = [
    overlay.unreachable.count === 0 ? '' : `${overlay.unreachable.count} unreachable (${overlay.unreachable.nodes.join(', ')}${more(overlay.unreachable.count, overlay.unreachable.nodes.length)}): no address another node can dial; each opens its tunnels itself`,
    overlay.unreported.count === 0 ? '' : `${overlay.unreported.count} unreported (${overlay.unreported.nodes.join(', ')}${more(overlay.unreported.count, overlay.unreported.nodes.length)}): its host said no addresses yet`,
    overlay.no_wireguard.count === 0 ? '' : `${overlay.no_wireguard.count} without WireGuard (${overlay.no_wireguard.nodes.join(', ')}${more(overlay.no_wireguard.count, overlay.no_wireguard.nodes.length)}): no tunnel to or from it`,
  ].filter((part) => part !== '');
  return parts.length === 0 ? 'overlay: every node can be dialled by its peers' : `overlay: ${parts.join('; ')} (docs/overlay.md)`;
}

// A list cut at STATUS_LIST_MAX says how many it left out, and where they all are.
function more(count: number, named: number): string {
  return count > named ? `; and ${count - named} more (mesh-control nodes)` : '';
}
