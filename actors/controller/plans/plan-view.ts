import { unsentTargets } from '../../../machines/plan.machine';
import type { PlanRow } from './plans.repo';

/** One node of a plan, as `plans show` tells it. */
export interface PlanNodeView {
  node: string;
  /** `sent` (with the generation), `failed` (why), `skipped` (why), or `not sent`. */
  status: 'sent' | 'failed' | 'skipped' | 'not sent';
  first: boolean;
  generation: number | null;
  detail: string | null;
}

/** A plan as `plans` and `plans show` answer it (snake_case, for --json). */
export interface PlanView {
  id: number;
  module: string;
  version: string;
  upgrade_policy: string;
  state: string;
  ended: boolean;
  first: string | null;
  first_applied: boolean;
  note: string | null;
  superseded_by: number | null;
  opened_at: string;
  updated_at: string;
  ended_at: string | null;
  nodes: PlanNodeView[];
  /** Nodes it has not sent: still to go while it is open, never sent once it has ended. */
  unsent: string[];
}

/** The view of a plan row. */
export function planView(row: PlanRow): PlanView {
  const { context } = row;
  return {
    id: row.id,
    module: row.module,
    version: row.version,
    upgrade_policy: row.upgrade_policy,
    state: row.state,
    ended: row.ended_at !== null,
    first: context.first,
    first_applied: context.firstApplied,
    note: row.note,
    superseded_by: row.superseded_by,
    opened_at: row.opened_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    nodes: context.targets.map((node) => {
      const first = node === context.first;
      const sent = context.sent[node];
      if (sent !== undefined) return { node, status: 'sent', first, generation: sent.generation, detail: null };
      const skipped = context.skipped[node];
      if (skipped !== undefined) return { node, status: 'skipped', first, generation: null, detail: skipped };
      const failed = context.failed[node];
      if (failed !== undefined) return { node, status: 'failed', first, generation: null, detail: failed };
      return { node, status: 'not sent', first, generation: null, detail: null };
    }),
    unsent: unsentTargets(context),
  };
}

/** `mesh-control plans`: one line per plan. */
export function formatPlanList(views: readonly PlanView[], all: boolean): string {
  if (views.length === 0) return all ? 'no plans yet' : 'no open plans (mesh-control plans --all lists the ended ones too)';
  const rows = views.map((view) => [
    String(view.id),
    view.module,
    view.version,
    view.upgrade_policy,
    view.state,
    `${view.nodes.filter((node) => node.status === 'sent').length}/${view.nodes.length} sent`,
    view.note ?? '',
  ]);
  const header = ['ID', 'MODULE', 'VERSION', 'POLICY', 'STATE', 'SENT', 'NOTE'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  ').trimEnd()).join('\n');
}

/** `mesh-control plans show ID`: the plan, then each node. */
export function formatPlan(view: PlanView): string {
  const lines = [
    `plan ${view.id}: ${view.module} ${view.version} (${view.upgrade_policy}), ${view.state}`,
    `opened ${view.opened_at}${view.ended_at === null ? '' : `, ended ${view.ended_at}`}`,
  ];
  if (view.first !== null) lines.push(`first machine: ${view.first}${view.first_applied ? ' (applied)' : ''}`);
  if (view.note !== null) lines.push(`note: ${view.note}`);
  lines.push('');
  const width = Math.max(4, ...view.nodes.map((node) => node.node.length));
  for (const node of view.nodes) {
    const what = node.status === 'sent' ? `sent as generation ${node.generation}` : node.detail === null ? node.status : `${node.status}: ${node.detail}`;
    lines.push(`  ${node.node.padEnd(width)}  ${what}${node.first ? '  (first machine)' : ''}`);
  }
  if (view.unsent.length > 0) {
    lines.push('');
    lines.push(view.ended ? `never sent: ${view.unsent.join(', ')} (mesh-control push NODE --why TEXT sends one)` : `still to send: ${view.unsent.join(', ')}`);
  }
  return lines.join('\n');
}
