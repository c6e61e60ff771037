import type { Report } from '../../../schema/report';
import { recordDeclaration } from '../declarations/declarations.repo';
import { recordNodeReport } from '../reports/record-node-report';
import { upsertNode } from '../store/nodes.repo';
import type { Sql } from '../store/sql-store';
import { STORE_KINDS, useTestStore } from '../store/testing/use-test-store';
import { DURATIONS_KEPT_MS, DURATION_WINDOW_MS, DurationRecorder, durationsOf } from './duration-recorder';
import { summariseDurations } from './summarise-durations';

const T0 = new Date('2026-12-01T10:00:00.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

/** A fake of the narrow Sql interface whose next `failures` statements fail, as a store that went away would; then the real one answers. */
class FailingSql implements Sql {
  constructor(private readonly real: Sql, private failures: number) {}
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    if (this.failures > 0) {
      this.failures -= 1;
      return Promise.reject(new Error('connection terminated'));
    }
    return this.real.query<T>(sql, params);
  }
  exec(script: string): Promise<void> {
    return this.real.exec(script);
  }
}

describe.each(STORE_KINDS)('durations on %s', (kind) => {
  const t = useTestStore(kind);
  const rows = async (): Promise<number> => Number((await t.store.query<{ n: string | number }>('SELECT count(*) AS n FROM duration_counts'))[0]?.n);

  beforeEach(async () => {
    await t.store.query('DELETE FROM duration_counts');
  });

  test('what is heard is counted once flushed, per kind, with its median, p90 and p99', async () => {
    const recorder = new DurationRecorder(t.store);
    for (let index = 1; index <= 100; index += 1) recorder.heard('apply', index * 100, at(index));
    recorder.heard('plan-tier', 90_000, at(0));
    expect(await summariseDurations(t.store, T0)).toEqual([
      { kind: 'apply', count: 0, median_ms: null, p90_ms: null, p99_ms: null },
      { kind: 'heartbeat-gap', count: 0, median_ms: null, p90_ms: null, p99_ms: null },
      { kind: 'plan-tier', count: 0, median_ms: null, p90_ms: null, p99_ms: null },
    ]);
    await recorder.flush();
    const [apply, gaps, tiers] = await summariseDurations(t.store, T0);
    expect(apply).toMatchObject({ kind: 'apply', count: 100 });
    for (const [said, exact] of [[apply?.median_ms, 5_000], [apply?.p90_ms, 9_000], [apply?.p99_ms, 9_900]] as const) expect(Math.abs((said as number) - exact) / exact).toBeLessThan(0.045);
    expect(gaps?.count).toBe(0);
    expect(tiers).toMatchObject({ kind: 'plan-tier', count: 1 });
    expect(await summariseDurations(t.store, T0, 'plan-tier')).toEqual([tiers]);
  });

  test('ten thousand heartbeats a minute for ten minutes add a handful of rows, not a hundred thousand', async () => {
    const recorder = new DurationRecorder(t.store);
    for (let minute = 0; minute <= 10; minute += 1) {
      // Each node beats once a minute, a little late or early.
      for (let node = 0; node < 10_000; node += 1) recorder.heartbeat(`node-${node}`, at(minute * 60_000 + (node % 7) * 100 + (minute % 2) * 250));
      await recorder.flush();
    }
    const [gaps] = await summariseDurations(t.store, T0, 'heartbeat-gap');
    expect(gaps?.count).toBe(100_000);
    expect(Math.abs((gaps?.median_ms as number) - 60_000) / 60_000).toBeLessThan(0.045);
    // Three five-minute windows, a couple of bins each.
    expect(await rows()).toBeLessThanOrEqual(3 * 4);
  }, 60_000);

  test('a node\'s first heartbeat heard measures nothing; the next measures the gap; a clock stepped back measures nothing', async () => {
    const recorder = new DurationRecorder(t.store);
    recorder.heartbeat('kitchen', at(0));
    recorder.heartbeat('kitchen', at(30_000));
    recorder.heartbeat('kitchen', at(20_000));
    recorder.heartbeat('hall', at(5_000));
    await recorder.flush();
    const [gaps] = await summariseDurations(t.store, T0, 'heartbeat-gap');
    expect(gaps?.count).toBe(1);
    expect(Math.abs((gaps?.median_ms as number) - 30_000) / 30_000).toBeLessThan(0.045);
  });

  test('flushes add to the counts already written, and a window before --since is left out', async () => {
    const recorder = new DurationRecorder(t.store);
    recorder.heard('apply', 1_000, at(0));
    await recorder.flush();
    recorder.heard('apply', 1_000, at(1));
    recorder.heard('apply', 1_000, at(DURATION_WINDOW_MS));
    await recorder.flush();
    expect(await rows()).toBe(2);
    expect((await summariseDurations(t.store, T0, 'apply'))[0]?.count).toBe(3);
    expect((await summariseDurations(t.store, at(DURATION_WINDOW_MS), 'apply'))[0]?.count).toBe(1);
  });

  test('a flush the store refuses keeps its counts for the next, which writes them once', async () => {
    const recorder = new DurationRecorder(new FailingSql(t.store, 1));
    recorder.heard('apply', 2_000, at(0));
    recorder.heard('apply', 2_000, at(0));
    await expect(recorder.flush()).rejects.toThrow('connection terminated');
    expect(recorder.pendingCounts()).toBe(1);
    recorder.heard('apply', 2_000, at(0));
    await recorder.flush();
    expect(recorder.pendingCounts()).toBe(0);
    expect((await summariseDurations(t.store, T0, 'apply'))[0]?.count).toBe(3);
  });

  test('windows older than 30 days are pruned, newer ones kept', async () => {
    const recorder = new DurationRecorder(t.store);
    recorder.heard('apply', 1_000, at(0));
    recorder.heard('apply', 1_000, at(DURATION_WINDOW_MS));
    await recorder.flush();
    expect(await recorder.prune(at(DURATIONS_KEPT_MS + DURATION_WINDOW_MS))).toBe(1);
    expect(await rows()).toBe(1);
    expect(await recorder.prune(at(DURATIONS_KEPT_MS + DURATION_WINDOW_MS))).toBe(0);
  });

  test('apply: the first report a node sends on a declaration counts from that declaration\'s send; the next reports on it count nothing', async () => {
    const node = 'apply-node';
    await upsertNode(t.store, { name: node, lifecycle_state: 'enrolled', public_key: `${'A'.repeat(43)}=`, nkey: `U${'1'.repeat(55)}` }, T0);
    await recordDeclaration(t.store, { node, generation: 1, epoch: 1, kind: 'full', digest: 'd'.repeat(64), sent_at: at(0) });
    const report = (reportSequence: number, generation: number): Report =>
      ({
        node, epoch: 1, sequence: generation, report_sequence: reportSequence, declaration_digest: 'd'.repeat(64), generation,
        results: [], owned: { resources: [] }, version_running: '0.1.0', seconds_since_linked: null, sent_at: T0.toISOString(),
      }) as unknown as Report;
    expect(await recordNodeReport(t.store, report(0, 1), at(42_000))).toEqual({ accepted: true });
    expect(await recordNodeReport(t.store, report(1, 1), at(90_000))).toEqual({ accepted: true });
    // A generation the controller has no send of (sent by another mesh's controller, say) counts nothing.
    expect(await recordNodeReport(t.store, report(0, 2), at(95_000))).toEqual({ accepted: true });
    await durationsOf(t.store).flush();
    const [apply] = await summariseDurations(t.store, T0, 'apply');
    expect(apply?.count).toBe(1);
    expect(Math.abs((apply?.median_ms as number) - 42_000) / 42_000).toBeLessThan(0.045);
  });
});
