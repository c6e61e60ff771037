import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { PlanState } from '../../../machines/plan.machine';
import { PROBE_FAILED, SIGNALS } from '../conditions/signals-table';
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

/** How long a scrape waits for the store: under Prometheus's default scrape timeout (10 s). */
export const STORE_BOUND_MS = 5_000;

interface StateCount {
  state: string;
  count: number;
}

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
  /**
   * The kinds of the open conditions, one entry per open condition (the condition store); left
   * out, the series is not served (a controller without a condition store).
   */
  openConditionKinds?: () => Promise<readonly string[]>;
  /** How long a scrape waits for the store before leaving nodes and plans out (STORE_BOUND_MS). */
  storeBoundMs?: number;
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
  // One read of the store per scrape, shared by the metrics drawn from it: prom-client collects
  // every metric at once, and the failure count must see this scrape's read, not the last one's.
  let reading: Promise<{ nodes: StateCount[]; plans: StateCount[] } | null> | undefined;
  const storeNow = () =>
    (reading ??= withinBound(Promise.all([
      deps.store.query<StateCount>('SELECT lifecycle_state AS state, count(*)::int AS count FROM nodes GROUP BY 1'),
      deps.store.query<StateCount>('SELECT state, count(*)::int AS count FROM plans GROUP BY 1'),
    ]), deps.storeBoundMs ?? STORE_BOUND_MS)
      .then(([nodes, plans]) => ({ nodes, plans }), () => null)
      .finally(() => setImmediate(() => (reading = undefined))));
  let readsFailed = 0;
  const fromStore = async (gauge: Gauge<'state'>, known: readonly string[], rows: (read: { nodes: StateCount[]; plans: StateCount[] }) => StateCount[]): Promise<void> => {
    gauge.reset();
    const read = await storeNow();
    if (read === null) return;
    for (const state of known) gauge.set({ state }, 0);
    for (const row of rows(read)) gauge.set({ state: row.state }, Number(row.count));
  };
  const fromCounts = (counter: Counter<string>, label: string, counts: ReadonlyMap<string, number>, known: readonly string[] = []): void => {
    counter.reset();
    for (const key of known) counter.inc({ [label]: key }, 0);
    for (const [key, value] of counts) counter.inc({ [label]: key }, value);
  };

  new Gauge({
    name: `${METRICS_PREFIX}nodes`, help: 'Nodes in the store by lifecycle state', labelNames: ['state'], registers,
    collect() {
      return fromStore(this, NODE_STATES, (read) => read.nodes);
    },
  });
  new Gauge({
    name: `${METRICS_PREFIX}plans`, help: 'Plans in the store by state (open and ended)', labelNames: ['state'], registers,
    collect() {
      return fromStore(this, PLAN_STATES, (read) => read.plans);
    },
  });
  new Counter({
    name: `${METRICS_PREFIX}store_reads_failed_total`, help: 'Scrapes whose read of nodes and plans from the store failed (those two then have no samples)', registers,
    async collect() {
      if ((await storeNow()) === null) readsFailed += 1;
      this.reset();
      this.inc(readsFailed);
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
  const openKinds = deps.openConditionKinds;
  if (openKinds !== undefined) {
    let conditionReadsFailed = 0;
    let conditionsNow: Promise<readonly string[] | null> | undefined;
    // Read once per scrape, shared by the gauge and its failure count, as the store's read is.
    const readConditions = () =>
      (conditionsNow ??= withinBound(openKinds(), deps.storeBoundMs ?? STORE_BOUND_MS)
        .then((kinds) => kinds, () => null)
        .finally(() => setImmediate(() => (conditionsNow = undefined))));
    new Gauge({
      name: `${METRICS_PREFIX}conditions_open`, help: 'Open conditions by kind (every row of the signals table shown even at zero); no samples when the condition store could not be read', labelNames: ['kind'], registers,
      async collect() {
        this.reset();
        const kinds = await readConditions();
        if (kinds === null) return;
        for (const kind of [...SIGNALS.map((row) => row.kind), PROBE_FAILED]) this.set({ kind }, 0);
        for (const kind of kinds) this.inc({ kind });
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}condition_reads_failed_total`, help: 'Scrapes whose read of the open conditions failed (conditions_open then has no samples)', registers,
      async collect() {
        if ((await readConditions()) === null) conditionReadsFailed += 1;
        this.reset();
        this.inc(conditionReadsFailed);
      },
    });
  }
  if (deps.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  return registry;
}

/** `work`, or a rejection once `ms` have passed without it settling. */
function withinBound<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
