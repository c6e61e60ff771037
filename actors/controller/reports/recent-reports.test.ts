import { upsertNode } from '../store/nodes.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { formatRecentReports, recentReports } from './recent-reports';

describe('the latest reports, in brief', () => {
  const t = useTestStore('postgres');
  const at = (second: number): Date => new Date(Date.UTC(2026, 11, 1, 10, 0, second));
  let sequence = 0;

  async function report(node: string, second: number, results: Array<{ outcome: string }>, refused?: string): Promise<void> {
    sequence += 1;
    await t.store.query(
      `INSERT INTO reports (node, epoch, sequence, report_sequence, generation, results, refused, version_running, sent_at, received_at)
       VALUES ($1, 2, $2, $2, $2, $3, $4, '0.1.0', $5, $5)`,
      [node, sequence, JSON.stringify(results.map((result, index) => ({ key: `file:/f${index}`, shape: 'file', ...result }))), refused === undefined ? null : JSON.stringify({ reason: refused }), at(second)],
    );
  }

  beforeAll(async () => {
    for (const name of ['kitchen', 'attic']) await upsertNode(t.store, { name, lifecycle_state: 'revoked' }, at(0));
    await report('kitchen', 1, [{ outcome: 'applied' }, { outcome: 'applied' }, { outcome: 'failed' }]);
    await report('attic', 3, [], 'it names the host\'s own unit');
    await report('kitchen', 2, []);
  });

  test('lists the newest first, each with its results counted by outcome and a refusal\'s reason', async () => {
    const reports = await recentReports(t.store, 20);
    expect(reports.map((kept) => [kept.node, kept.received_at])).toEqual([
      ['attic', at(3).toISOString()],
      ['kitchen', at(2).toISOString()],
      ['kitchen', at(1).toISOString()],
    ]);
    expect(reports[0]).toMatchObject({ refused: 'it names the host\'s own unit', outcomes: {} });
    expect(reports[2]).toMatchObject({ refused: null, outcomes: { applied: 2, failed: 1 }, version_running: '0.1.0' });
    expect(formatRecentReports(reports)).toMatch(/kitchen {2}generation \d+: 2 applied, 1 failed/);
  });

  test('stops at the limit asked for', async () => {
    expect((await recentReports(t.store, 1)).map((kept) => kept.node)).toEqual(['attic']);
  });
});
