import type { PlanState } from '../../../machines/plan.machine';
import { drawDashboardCharts, LEASE_STANDING_IN_CHART, litStateIds, STORE_STATE_IN_LIFECYCLE, type DashboardChart, type DashboardChartName } from './dashboard-charts';

// The page lights states by the ids the machines give them; these tests fail when a machine
// renames or drops a state the store or the status still says, instead of the page silently
// lighting nothing.

let charts: Map<DashboardChartName, DashboardChart>;

beforeAll(async () => {
  charts = await drawDashboardCharts();
}, 30_000);

const chart = (name: DashboardChartName): DashboardChart => {
  const found = charts.get(name);
  if (found === undefined) throw new Error(`no ${name} chart`);
  return found;
};

const titled = (svg: string, id: string): boolean => svg.includes(`<title>${id}</title>`) || svg.includes(`<title>cluster_${id}</title>`);

test('every lifecycle state the store keeps lights its state in the lifecycle chart, revoked none', () => {
  const { model } = chart('lifecycle');
  const lit = (state: string): string[] => litStateIds(model, STORE_STATE_IN_LIFECYCLE[state] ?? state);
  expect(lit('enrolled')).toEqual(['lifecycle.enrolled', 'lifecycle.enrolled.operating']);
  expect(lit('disconnected')).toEqual(['lifecycle.disconnected']);
  expect(lit('released')).toEqual(['lifecycle.hosted']);
  expect(lit('revoked')).toEqual([]);
});

test('every state a plan is kept in lights one state of the plan chart, inside open where it is nested', () => {
  const { model } = chart('plan');
  const states: PlanState[] = ['opening', 'held', 'sendingFirst', 'awaitingFirst', 'sending', 'stopped', 'done', 'closed', 'superseded'];
  for (const state of states) {
    const ids = litStateIds(model, state);
    expect(ids.at(-1)).toMatch(new RegExp(`^plan\\.(open\\.)?${state}$`));
  }
  expect(litStateIds(model, 'sending')).toEqual(['plan.open', 'plan.open.sending']);
});

test('the lease child\'s own state value and every standing status says light the lease chart', () => {
  const { model } = chart('lease');
  expect(litStateIds(model, 'holding.waiting')).toEqual(['lease.holding', 'lease.holding.waiting']);
  for (const standing of Object.keys(LEASE_STANDING_IN_CHART)) expect(litStateIds(model, LEASE_STANDING_IN_CHART[standing]).length).toBeGreaterThan(0);
  expect(litStateIds(model, 'no.such.state')).toEqual([]);
  expect(litStateIds(model, null)).toEqual([]);
});

test('each id lit is the title of a group in the SVG the page is sent, as the page finds it', () => {
  const lifecycle = chart('lifecycle');
  for (const id of [...litStateIds(lifecycle.model, 'enrolled'), ...litStateIds(lifecycle.model, 'disconnected'), ...litStateIds(lifecycle.model, 'hosted')]) {
    expect({ id, titled: titled(lifecycle.svg, id) }).toEqual({ id, titled: true });
  }
  const plan = chart('plan');
  for (const id of litStateIds(plan.model, 'awaitingFirst')) expect({ id, titled: titled(plan.svg, id) }).toEqual({ id, titled: true });
});
