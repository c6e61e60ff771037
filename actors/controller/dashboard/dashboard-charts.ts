import type { AnyStateMachine } from 'xstate';
import { leaseMachine } from '../../../machines/lease.machine';
import { lifecycleMachine } from '../../../machines/lifecycle.machine';
import { planMachine } from '../../../machines/plan.machine';
import { chartModel, type ChartMachine, type ChartState } from '../charts/chart-model';
import { machineToDot } from '../charts/machine-to-dot';
import { renderSvg } from '../charts/render-svg';

/** The machines whose charts the dashboard lights up, by the name their chart has in docs/charts/. */
export type DashboardChartName = 'lifecycle' | 'plan' | 'lease';

/** One chart as the page draws it: the SVG `npm run charts` draws, and the model to find states in. */
export interface DashboardChart {
  name: DashboardChartName;
  svg: string;
  model: ChartMachine;
}

/**
 * A node's state in the store that the lifecycle machine has under another name. A released
 * node's machine is `hosted` again (the host stays, the identity is gone); a revoked node is in
 * no state of the machine (its identity was cut off by the controller, not by the host), so
 * it lights nothing.
 */
export const STORE_STATE_IN_LIFECYCLE: Readonly<Record<string, string>> = { released: 'hosted' };

/**
 * The lease's standing as status says it, in the lease machine's words, for when the
 * supervision tree does not carry the lease child's own state.
 */
export const LEASE_STANDING_IN_CHART: Readonly<Record<string, string>> = {
  acting: 'holding',
  quiet: 'holding',
  'standing by': 'contending',
  stopped: 'released',
  lost: 'lost',
};

/**
 * Draws the three charts from the machines themselves, with the code `npm run charts` uses, so
 * the page and docs/charts/ are one drawing: a state added to a machine appears on the page,
 * and the ids the page lights are the machine's state ids (the `<title>` of each SVG group).
 * The command loads this module only when the dashboard starts, not with the CLI.
 */
export async function drawDashboardCharts(): Promise<Map<DashboardChartName, DashboardChart>> {
  const machines: Array<[DashboardChartName, AnyStateMachine]> = [['lifecycle', lifecycleMachine], ['plan', planMachine], ['lease', leaseMachine]];
  const charts = new Map<DashboardChartName, DashboardChart>();
  for (const [name, machine] of machines) {
    const model = chartModel(machine);
    charts.set(name, { name, model, svg: await renderSvg(machineToDot(model)) });
  }
  return charts;
}

/**
 * The state ids to light for `value`: a state value as XState says it (`holding.waiting`), or a
 * state's own key (`sendingFirst`, `disconnected`), found anywhere in the machine. The answer
 * holds the state, its ancestors (drawn as the boxes around it) and, for a compound state, the
 * initial states it enters; empty when the machine has no such state.
 */
export function litStateIds(model: ChartMachine, value: string | null | undefined): string[] {
  if (value === null || value === undefined || value === '') return [];
  const path = findByPath(model.root, value.split('.')) ?? findByKey(model.root, value, []);
  if (path === undefined) return [];
  const lit = path.filter((state) => state !== model.root).map((state) => state.id);
  let state = path.at(-1);
  while (state !== undefined && state.kind === 'compound' && state.initial !== undefined) {
    const initial: string = state.initial;
    state = state.children.find((child) => child.id === initial);
    if (state !== undefined) lit.push(state.id);
  }
  return lit;
}

function findByPath(root: ChartState, keys: readonly string[]): ChartState[] | undefined {
  const path: ChartState[] = [root];
  let state = root;
  for (const key of keys) {
    const next = state.children.find((child) => child.key === key);
    if (next === undefined) return undefined;
    path.push(next);
    state = next;
  }
  return path;
}

function findByKey(state: ChartState, key: string, above: ChartState[]): ChartState[] | undefined {
  const path = [...above, state];
  if (state.key === key && above.length > 0) return path;
  for (const child of state.children) {
    const found = findByKey(child, key, path);
    if (found !== undefined) return found;
  }
  return undefined;
}
