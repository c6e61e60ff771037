import type { Condition } from '../../../schema/condition';
import type { ControllerStatus } from '../../../schema/controller-status';
import { isOperatorError } from '../../shared/operator-error';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import type { VerbAnswer } from '../control/verb-registry';
import { listEveryNode } from '../nodes/list-every-node';
import type { PlanView } from '../plans/plan-view';
import type { RecentReport } from '../reports/recent-reports';
import { LEASE_STANDING_IN_CHART, litStateIds, STORE_STATE_IN_LIFECYCLE, type DashboardChart, type DashboardChartName } from './dashboard-charts';

/** Asks the controller one query verb (a ControlLine's `call`, or a registry in a test). */
export type AskController = (verb: string, args: Record<string, unknown>) => Promise<VerbAnswer>;

/** One node as the page shows it. */
export interface DashboardNode {
  name: string;
  lifecycle_state: string;
  host_kind: string | null;
  version_running: string | null;
  address: string | null;
  last_seen_at: string | null;
  last_seen: string;
  disconnected_since: string | null;
  /** Open conditions about this node. */
  conditions: Array<Pick<Condition, 'id' | 'kind' | 'severity' | 'detail' | 'show'> & { silenced: boolean }>;
  /** The lifecycle chart's state ids to light (empty for a state the machine does not have, as revoked). */
  chart: string[];
}

/** One plan, its tiers (the first machine, then the rest) and where its chart is. */
export interface DashboardPlan {
  id: number;
  module: string;
  version: string;
  policy: string;
  state: string;
  note: string | null;
  tiers: Array<{ name: string; nodes: Array<{ node: string; status: string; detail: string | null }> }>;
  chart: string[];
}

/** Everything the page shows, as one document sent whole on every change. */
export interface DashboardSnapshot {
  /** When it was read (this process's clock). */
  read_at: string;
  /** The controller that answered, and when its status was composed. */
  controller: string | null;
  status_composed_at: string | null;
  lease: {
    standing: string | null;
    holder: string | null;
    holder_since: string | null;
    epoch: number | null;
    epoch_floor: number | null;
    note: string | null;
    chart: string[];
  };
  nodes: DashboardNode[];
  plans: DashboardPlan[];
  tree: SupervisionTreeNode | null;
  reports: RecentReport[];
  refusals: {
    reports: ControllerStatus['refused_reports']['by_node'];
    declarations: Array<{ node: string; generation: number; refused: string; reported_at: string | null }>;
  };
  problems: ControllerStatus['problems'];
  /** What could not be read, each with what to do (the rest is shown as read). */
  errors: Array<{ what: string; next: string }>;
}

/**
 * Reads the whole dashboard from the controller's query verbs (status, nodes.list, plans.list,
 * tree, reports.recent), side by side. A verb that fails leaves its part empty and says why in
 * `errors`, so a controller that is restarting shows as such rather than as an empty mesh.
 * State ids to light are found in the charts here, once, not in the browser.
 */
export async function readDashboardSnapshot(ask: AskController, charts: ReadonlyMap<DashboardChartName, DashboardChart>, now: Date): Promise<DashboardSnapshot> {
  const errors: DashboardSnapshot['errors'] = [];
  const attempt = async <T>(what: string, read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      errors.push(isOperatorError(error) ? { what: `${what}: ${error.message}`, next: error.next } : { what: `${what}: ${(error as Error)?.message ?? String(error)}`, next: 'see the output of mesh-control dashboard' });
      return undefined;
    }
  };
  const [status, nodes, plans, tree, reports] = await Promise.all([
    attempt('status', async () => (await ask('status', {})).result as ControllerStatus),
    attempt('nodes', () => listEveryNode((args) => ask('nodes.list', args))),
    attempt('plans', async () => ((await ask('plans.list', {})).result as { plans: PlanView[] }).plans),
    attempt('tree', async () => (await ask('tree', {})).result as SupervisionTreeNode),
    attempt('reports', async () => ((await ask('reports.recent', { limit: 20 })).result as { reports: RecentReport[] }).reports),
  ]);
  const lifecycle = charts.get('lifecycle');
  const plan = charts.get('plan');
  const lease = charts.get('lease');
  const conditions = status?.conditions?.list ?? [];
  const leaseChild = tree === undefined ? undefined : findChild(tree, 'lease');
  const leaseValue = leaseChild?.child_state ?? LEASE_STANDING_IN_CHART[status?.lease.state ?? ''];
  return {
    read_at: now.toISOString(),
    controller: status?.controller ?? null,
    status_composed_at: status?.composed_at ?? null,
    lease: {
      standing: status?.lease.state ?? null,
      holder: status?.lease.holder ?? null,
      holder_since: status?.lease.holder_since ?? null,
      epoch: status?.lease.epoch ?? null,
      epoch_floor: status?.lease.epoch_floor ?? null,
      note: status?.lease.note ?? null,
      chart: lease === undefined ? [] : litStateIds(lease.model, leaseValue),
    },
    nodes: (nodes ?? []).map((node) => ({
      name: node.name,
      lifecycle_state: node.lifecycle_state,
      host_kind: node.host_kind,
      version_running: node.version_running,
      address: node.address,
      last_seen_at: node.last_seen_at,
      last_seen: node.last_seen,
      disconnected_since: node.disconnected_since,
      conditions: conditions
        .filter((condition) => condition.subject === node.name && condition.state === 'open')
        .map((condition) => ({ id: condition.id, kind: condition.kind, severity: condition.severity, detail: condition.detail, show: condition.show, silenced: condition.silence !== null })),
      chart: lifecycle === undefined ? [] : litStateIds(lifecycle.model, STORE_STATE_IN_LIFECYCLE[node.lifecycle_state] ?? node.lifecycle_state),
    })),
    plans: (plans ?? []).map((view) => ({
      id: view.id,
      module: view.module,
      version: view.version,
      policy: view.upgrade_policy,
      state: view.state,
      note: view.note,
      tiers: planTiers(view),
      chart: plan === undefined ? [] : litStateIds(plan.model, view.state),
    })),
    tree: tree ?? null,
    reports: reports ?? [],
    refusals: {
      reports: status?.refused_reports.by_node ?? [],
      declarations: (status?.declarations.failed.nodes ?? [])
        .filter((failed): failed is typeof failed & { refused: string } => failed.refused !== null)
        .map((failed) => ({ node: failed.node, generation: failed.generation, refused: failed.refused, reported_at: failed.reported_at })),
    },
    problems: status?.problems ?? [],
    errors,
  };
}

// A plan sends its first machine alone, then the rest once it applied (`together` sends all in one tier).
function planTiers(view: PlanView): DashboardPlan['tiers'] {
  const entry = (node: PlanView['nodes'][number]): { node: string; status: string; detail: string | null } => ({ node: node.node, status: node.status, detail: node.detail });
  if (view.first === null) return [{ name: 'all together', nodes: view.nodes.map(entry) }];
  return [
    { name: `first: ${view.first}${view.first_applied ? ' (applied)' : ''}`, nodes: view.nodes.filter((node) => node.first).map(entry) },
    { name: 'the rest', nodes: view.nodes.filter((node) => !node.first).map(entry) },
  ].filter((tier) => tier.nodes.length > 0);
}

function findChild(node: SupervisionTreeNode, id: string): SupervisionTreeNode | undefined {
  if (node.id === id) return node;
  for (const child of node.children) {
    const found = findChild(child, id);
    if (found !== undefined) return found;
  }
  return undefined;
}
