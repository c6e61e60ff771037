import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { PlanState } from '../../../machines/plan.machine';
import type { BusRepairCounts } from '../declarations/bus-repairs';
import type { LeaseStanding } from '../lease/lease-gate';
import type { Sql } from '../store/sql-store';
import type { MeshTally } from './mesh-tally';

/** Every name starts so, beside the process's own metrics, which carry it too. */
export const METRICS_PREFIX = 'mesh_controller_';

/** Node lifecycle states (migrations/0001_nodes.sql), each shown even at zero so a state emptying reads 0, not absent. */
const NODE_STATES = ['enrolled', 'disconnected', 'revoked', 'released'] as const;

/** Plan states (machines/plan.machine.ts PlanState), likewise each shown at zero. */
const PLAN_STATES: readonly PlanState[] = ['opening', 'held', 'sendingFirst', 'awaitingFirst', 'sending', 'stopped', 'done', 'closed', 'superseded'];

/** What the metrics are read from, each at scrape time. */
export interface ControllerMetricsDeps {
  /** The store: nodes and plans by state. */
  store: Sql;
  /** Where this controller stands with the lease. */
  lease: { standing(): LeaseStanding };
  /** Sends, reports, refusals and renewals counted since the process started. */
  tally: MeshTally;
  /** The bus repairs made since the process started. */
  repairs(): BusRepairCounts;
  /** The process's own metrics (memory, event loop lag, handles); on unless false. */
  processMetrics?: boolean;
}

/**
 * The controller's metrics as a Prometheus registry. Counts kept in the process (sends,
 * reports, refusals, repairs, renewals) and where the lease stands are read at each scrape; the
 * nodes and plans by state are counted in the store at each scrape, so a standby shows the same
 * mesh as the holder and nothing is kept twice. A store that does not answer leaves those two
 * without samples for that scrape and counts a failed read, rather than failing the whole scrape.
 */
export function controllerMetrics(deps: ControllerMetricsDeps): Registry {
  const registry = new Registry();
  const registers = [registry];
  const storeReadsFailed = new Counter({ name: `${METRICS_PREFIX}store_reads_failed_total`, help: 'Scrapes whose read of nodes or plans from the store failed', registers });
  const fromStore = async (gauge: Gauge<'state'>, known: readonly string[], sql: string): Promise<void> => {
    gauge.reset();
    try {
      const rows = await deps.store.query<{ state: string; count: number }>(sql);
      for (const state of known) gauge.set({ state }, 0);
      for (const row of rows) gauge.set({ state: row.state }, Number(row.count));
    } catch {
      storeReadsFailed.inc();
    }
  };
  const fromCounts = (counter: Counter<string>, label: string, counts: ReadonlyMap<string, number>, known: readonly string[] = []): void => {
    counter.reset();
    for (const key of known) counter.inc({ [label]: key }, 0);
    for (const [key, value] of counts) counter.inc({ [label]: key }, value);
  };

  new Gauge({
    name: `${METRICS_PREFIX}nodes`, help: 'Nodes in the store by lifecycle state', labelNames: ['state'], registers,
    collect() {
      return fromStore(this, NODE_STATES, 'SELECT lifecycle_state AS state, count(*)::int AS count FROM nodes GROUP BY 1');
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}plans`, help: 'Plans in the store by state (open and ended)', labelNames: ['state'], registers,
    collect() {
      return fromStore(this, PLAN_STATES, 'SELECT state, count(*)::int AS count FROM plans GROUP BY 1');
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}declarations_sent_total`, help: 'Declarations published to nodes by this process, by kind', labelNames: ['kind'], registers,
    collect() {
      fromCounts(this, 'kind', deps.tally.sent, ['overlay', 'full', 'final']);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}reports_total`, help: 'Node reports kept by this process', registers,
    collect() {
      this.reset();
      this.inc(deps.tally.reports);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}reports_refused_total`, help: 'Node reports this process refused, by reason', labelNames: ['reason'], registers,
    collect() {
      fromCounts(this, 'reason', deps.tally.reportsRefused);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}declarations_refused_total`, help: 'Declarations hosts reported refusing whole, by reason', labelNames: ['reason'], registers,
    collect() {
      fromCounts(this, 'reason', deps.tally.declarationsRefused);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}bus_repairs_total`, help: 'Repairs of the bus (stream, consumers, slots, re-sends) made by this process, by kind', labelNames: ['kind'], registers,
    collect() {
      fromCounts(this, 'kind', new Map(Object.entries(deps.repairs().by_kind).map(([kind, count]) => [kind, count ?? 0])));
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}lease_epoch`, help: 'The lease epoch this controller acts (or last acted) under; 0 before it first held the lease', registers,
    collect() {
      this.set(deps.lease.standing().epoch ?? 0);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}lease_acting`, help: '1 while this controller holds the lease and acts, else 0 (standing by, quiet, stopped, lost)', registers,
    collect() {
      this.set(deps.lease.standing().state === 'acting' ? 1 : 0);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}lease_renewals_total`, help: 'Renewals of the lease by this process, by outcome', labelNames: ['outcome'], registers,
    collect() {
      this.reset();
      this.inc({ outcome: 'renewed' }, deps.tally.renewals);
      this.inc({ outcome: 'failed' }, deps.tally.renewalsFailed);
    },
  });
  // Open conditions by kind (mesh_controller_conditions_open{kind}) go here, read from the condition store once it exists.
  if (deps.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  return registry;
}
