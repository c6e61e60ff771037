import type { Condition } from '../../../schema/condition';
import { ControllerDidNotAnswer } from '../control/control-errors';
import type { VerbAnswer } from '../control/verb-registry';
import type { NodeListing } from '../nodes/list-nodes';
import type { PlanView } from '../plans/plan-view';
import { drawDashboardCharts, type DashboardChart, type DashboardChartName } from './dashboard-charts';
import { readDashboardSnapshot, type AskController } from './dashboard-snapshot';

// The snapshot read from a hand-written fake of the controller's query verbs: what each answers
// is set by the test, and a verb can be made to fail as the real call fails.

let charts: Map<DashboardChartName, DashboardChart>;
beforeAll(async () => {
  charts = await drawDashboardCharts();
}, 30_000);

const at = '2026-12-01T10:00:00.000Z';

function listing(name: string, lifecycle_state: string): NodeListing {
  return { name, lifecycle_state, host_kind: 'resident', silence_bound_seconds: 90, address: null, version_running: '0.1.0', last_seen_at: at, last_seen: 'last seen 1 s ago', disconnected_since: null, last_away: null, host_away_seconds: null, overlay_reach: null };
}

function condition(subject: string, state: 'open' | 'cleared'): Condition {
  return { id: `heartbeat-silent.${subject}`, kind: 'heartbeat-silent', signal: 'S1', subject, severity: 'warning', state, detail: `node ${subject} is silent`, show: `mesh-control nodes ${subject}`, raised_at: at, changed_at: at, cleared_at: null, count: 1, epoch: 1, silence: null };
}

const plan: PlanView = {
  id: 7, module: 'web', version: '1.1', upgrade_policy: 'one-first', state: 'awaitingFirst', ended: false, first: 'attic', first_applied: false, note: null, superseded_by: null,
  opened_at: at, updated_at: at, ended_at: null, unsent: ['kitchen'],
  nodes: [{ node: 'attic', status: 'sent', first: true, generation: 4, detail: null }, { node: 'kitchen', status: 'not sent', first: false, generation: null, detail: null }],
};

/** A controller that answers each verb from `answers`, or fails it with what `failing` gives. */
function fakeController(answers: Record<string, unknown>, failing: Record<string, Error> = {}): AskController {
  return async (verb): Promise<VerbAnswer> => {
    const failure = failing[verb];
    if (failure !== undefined) throw failure;
    if (!(verb in answers)) throw new Error(`the fake controller was not told to answer ${verb}`);
    return { result: answers[verb], text: '' };
  };
}

const status = {
  composed_at: at, controller: 'vm:1', lease: { state: 'acting', epoch: 4, holder: 'vm:1', holder_since: at, epoch_floor: 4, note: null },
  refused_reports: { total: 0, by_reason: {}, by_node: [] },
  declarations: { outstanding: { count: 0, nodes: [] }, failed: { count: 1, nodes: [{ node: 'attic', generation: 3, failed: 0, refused: 'it names the host\'s own unit', reported_at: at }] } },
  problems: [],
  conditions: { open: 1, urgent: 0, silenced: 0, list: [condition('kitchen', 'open'), condition('attic', 'cleared')], unreadable: null },
};

test('each node carries its own open conditions and the lifecycle states to light; plans their tiers and plan state', async () => {
  const snapshot = await readDashboardSnapshot(fakeController({
    status,
    'nodes.list': { nodes: [listing('attic', 'enrolled'), listing('kitchen', 'disconnected'), listing('cellar', 'revoked')], next_after: null },
    'plans.list': { plans: [plan] },
    tree: { id: 'controller', state: 'supervising', restarts: 0, children: [{ id: 'lease', state: 'running', restarts: 0, child_state: 'holding.renewing', children: [] }] },
    'reports.recent': { reports: [] },
  }), charts, new Date(at));
  expect(snapshot.errors).toEqual([]);
  expect(snapshot.nodes.map((node) => [node.name, node.chart, node.conditions.map((open) => open.id)])).toEqual([
    ['attic', ['lifecycle.enrolled', 'lifecycle.enrolled.operating'], []],
    ['kitchen', ['lifecycle.disconnected'], ['heartbeat-silent.kitchen']],
    ['cellar', [], []],
  ]);
  expect(snapshot.lease).toMatchObject({ holder: 'vm:1', epoch: 4, chart: ['lease.holding', 'lease.holding.renewing'] });
  expect(snapshot.plans).toEqual([expect.objectContaining({
    id: 7,
    chart: ['plan.open', 'plan.open.awaitingFirst'],
    tiers: [{ name: 'first: attic', nodes: [{ node: 'attic', status: 'sent', detail: null }] }, { name: 'the rest', nodes: [{ node: 'kitchen', status: 'not sent', detail: null }] }],
  })]);
  expect(snapshot.refusals.declarations).toEqual([{ node: 'attic', generation: 3, refused: 'it names the host\'s own unit', reported_at: at }]);
});

test('a verb the controller does not answer leaves its part empty and says what to do, the rest shown as read', async () => {
  const snapshot = await readDashboardSnapshot(fakeController(
    { status, 'nodes.list': { nodes: [listing('attic', 'enrolled')], next_after: null }, 'plans.list': { plans: [] }, 'reports.recent': { reports: [] } },
    { tree: new ControllerDidNotAnswer('tree', 5000, '/var/lib/mesh-control') },
  ), charts, new Date(at));
  expect(snapshot.tree).toBeNull();
  expect(snapshot.nodes.map((node) => node.name)).toEqual(['attic']);
  expect(snapshot.errors).toEqual([{ what: expect.stringMatching(/^tree: /), next: expect.stringContaining('mesh-control serve') }]);
  // Without the tree, the lease is lit from the standing status says.
  expect(snapshot.lease.chart).toEqual(['lease.holding', 'lease.holding.waiting']);
});
