import { BusRepairs } from '../declarations/bus-repairs';
import type { LeaseStanding } from '../lease/lease-gate';
import { useTestStore } from '../store/testing/use-test-store';
import { controllerMetrics } from './controller-metrics';
import { MeshTally } from './mesh-tally';

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const DIGEST = 'a'.repeat(64);

describe('the controller\'s metrics', () => {
  const t = useTestStore('postgres');
  let standing: LeaseStanding = { state: 'standing by', epoch: null, acting_for_ms: 0, note: 'the lease has not been taken yet' };
  const tally = new MeshTally();
  const repairs = new BusRepairs(() => undefined);
  const registry = () => controllerMetrics({ store: t.store, lease: { standing: () => standing }, tally, repairs: () => repairs.counts(), processMetrics: false });

  test('count nodes and plans by state from the store, every known state shown even at zero', async () => {
    await t.store.query(`INSERT INTO nodes (name, lifecycle_state) VALUES ('gone-1', 'released'), ('gone-2', 'released'), ('bad', 'revoked')`);
    await t.store.query(`INSERT INTO module_revisions (name, version, seq, upgrade_policy, resources, digest, added_at) VALUES ('web', '1', 1, 'together', '[]', $1, now())`, [DIGEST]);
    for (const state of ['sending', 'sending', 'stopped']) {
      await t.store.query(`INSERT INTO plans (module, version, upgrade_policy, state, context, opened_at, updated_at, epoch) VALUES ('web', '1', 'together', $1, '{}', now(), now(), 1)`, [state]);
    }
    const text = await registry().metrics();
    expect(sample(text, 'mesh_controller_nodes{state="released"}')).toBe(2);
    expect(sample(text, 'mesh_controller_nodes{state="revoked"}')).toBe(1);
    expect(sample(text, 'mesh_controller_nodes{state="enrolled"}')).toBe(0);
    expect(sample(text, 'mesh_controller_plans{state="sending"}')).toBe(2);
    expect(sample(text, 'mesh_controller_plans{state="stopped"}')).toBe(1);
    expect(sample(text, 'mesh_controller_plans{state="done"}')).toBe(0);
    expect(sample(text, 'mesh_controller_store_reads_failed_total')).toBe(0);
    expect(text).not.toMatch(/process_resident_memory/);
  });

  test('read the tally, the repairs and the lease at each scrape, not when made', async () => {
    const metrics = registry();
    let text = await metrics.metrics();
    expect(sample(text, 'mesh_controller_lease_epoch')).toBe(0);
    expect(sample(text, 'mesh_controller_lease_acting')).toBe(0);
    expect(sample(text, 'mesh_controller_reports_refused_total{reason="older"}')).toBeUndefined();

    standing = { state: 'acting', epoch: 42, acting_for_ms: 9000, note: null };
    tally.declarationSent('full');
    tally.declarationSent('full');
    tally.reportKept();
    tally.reportRefused('older');
    tally.declarationRefused('stale_epoch');
    tally.leaseRenewal(true);
    tally.leaseRenewal(false);
    repairs.record({ kind: 'consumer_created', subject: 'node a', detail: 'it was gone', at: new Date() });
    text = await metrics.metrics();
    expect(sample(text, 'mesh_controller_lease_epoch')).toBe(42);
    expect(sample(text, 'mesh_controller_lease_acting')).toBe(1);
    expect(sample(text, 'mesh_controller_declarations_sent_total{kind="full"}')).toBe(2);
    expect(sample(text, 'mesh_controller_declarations_sent_total{kind="final"}')).toBe(0);
    expect(sample(text, 'mesh_controller_reports_total')).toBe(1);
    expect(sample(text, 'mesh_controller_reports_refused_total{reason="older"}')).toBe(1);
    expect(sample(text, 'mesh_controller_declarations_refused_total{reason="stale_epoch"}')).toBe(1);
    expect(sample(text, 'mesh_controller_lease_renewals_total{outcome="renewed"}')).toBe(1);
    expect(sample(text, 'mesh_controller_lease_renewals_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'mesh_controller_bus_repairs_total{kind="consumer_created"}')).toBe(1);

    // Scraped again with nothing new: the same, not doubled.
    text = await metrics.metrics();
    expect(sample(text, 'mesh_controller_declarations_sent_total{kind="full"}')).toBe(2);
  });

  test('a store that does not answer leaves nodes and plans out of that scrape and counts it, the rest still served', async () => {
    const broken = { query: () => Promise.reject(new Error('connection refused')) } as unknown as typeof t.store;
    const metrics = controllerMetrics({ store: broken, lease: { standing: () => standing }, tally, repairs: () => repairs.counts(), processMetrics: false });
    const text = await metrics.metrics();
    expect(text).not.toMatch(/^mesh_controller_nodes\{/m);
    expect(text).not.toMatch(/^mesh_controller_plans\{/m);
    expect(sample(text, 'mesh_controller_store_reads_failed_total')).toBe(1);
    expect(sample(text, 'mesh_controller_reports_total')).toBe(1);
    expect(sample(await metrics.metrics(), 'mesh_controller_store_reads_failed_total')).toBe(2);
  });

  test('a store that never answers is given up on within its bound, so the scrape is still answered', async () => {
    const silent = { query: () => new Promise(() => undefined) } as unknown as typeof t.store;
    const metrics = controllerMetrics({ store: silent, lease: { standing: () => standing }, tally, repairs: () => repairs.counts(), processMetrics: false, storeBoundMs: 50 });
    const text = await metrics.metrics();
    expect(text).not.toMatch(/^mesh_controller_nodes\{/m);
    expect(sample(text, 'mesh_controller_store_reads_failed_total')).toBe(1);
  });

  test('count open conditions by kind at each scrape, every row\'s kind shown even at zero', async () => {
    let open: string[] = ['heartbeat-silent', 'heartbeat-silent', 'probe-failed'];
    const metrics = controllerMetrics({ store: t.store, lease: { standing: () => standing }, tally, repairs: () => repairs.counts(), processMetrics: false, openConditionKinds: () => Promise.resolve(open) });
    let text = await metrics.metrics();
    expect(sample(text, 'mesh_controller_conditions_open{kind="heartbeat-silent"}')).toBe(2);
    expect(sample(text, 'mesh_controller_conditions_open{kind="probe-failed"}')).toBe(1);
    expect(sample(text, 'mesh_controller_conditions_open{kind="call-hung"}')).toBe(0);
    open = [];
    // One read serves one scrape; the next scrape (another request) comes after a turn of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    text = await metrics.metrics();
    expect(sample(text, 'mesh_controller_conditions_open{kind="heartbeat-silent"}')).toBe(0);
    expect(sample(text, 'mesh_controller_condition_reads_failed_total')).toBe(0);
  });

  test('a condition store that cannot be read leaves conditions_open out of that scrape and counts it', async () => {
    const metrics = controllerMetrics({ store: t.store, lease: { standing: () => standing }, tally, repairs: () => repairs.counts(), processMetrics: false, openConditionKinds: () => Promise.reject(new Error('no responders')) });
    const text = await metrics.metrics();
    expect(text).not.toMatch(/^mesh_controller_conditions_open\{/m);
    expect(sample(text, 'mesh_controller_condition_reads_failed_total')).toBe(1);
    expect(sample(text, 'mesh_controller_nodes{state="enrolled"}')).toBeDefined();
  });
});
