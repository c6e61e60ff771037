import type { Report } from '../../../schema/report';
import { getNode, upsertNode } from './nodes.repo';
import { countRefusalOf, recordReport, reportRefusalCounts, UNKNOWN_SENDER } from './reports.repo';
import { STORE_KINDS, useTestStore } from './testing/use-test-store';

const T0 = new Date('2026-12-01T10:00:00.000Z');
const later = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

function report(node: string, epoch: number, sequence: number, reportSequence: number, owned: string[] = []): Report {
  return {
    node,
    epoch,
    sequence,
    report_sequence: reportSequence,
    declaration_digest: 'd'.repeat(64),
    generation: sequence,
    results: [{ key: 'file:/etc/motd', shape: 'file', outcome: 'applied' }],
    owned: { resources: owned.map((path) => ({ key: `file:${path}`, shape: 'file', digest: 'a'.repeat(64), recorded_at: T0.toISOString() })) },
    version_running: '0.1.0',
    seconds_since_linked: null,
    sent_at: T0.toISOString(),
  } as Report;
}

describe.each(STORE_KINDS)('reports on %s', (kind) => {
  const t = useTestStore(kind);
  let n = 0;
  async function newNode(): Promise<string> {
    n += 1;
    const name = `node-${n}`;
    await upsertNode(t.store, { name, lifecycle_state: 'enrolled', public_key: `${String.fromCharCode(64 + n)}`.repeat(43) + '=', nkey: `U${String(n).repeat(55)}` }, T0);
    return name;
  }

  test('keeps reports in order by epoch, then sequence, then report sequence, and refuses and counts older ones', async () => {
    const node = await newNode();
    expect(await recordReport(t.store, report(node, 2, 5, 1), later(1))).toEqual({ accepted: true });
    expect(await recordReport(t.store, report(node, 2, 5, 2), later(2))).toEqual({ accepted: true });
    expect(await recordReport(t.store, report(node, 2, 6, 0), later(3))).toEqual({ accepted: true });
    expect(await recordReport(t.store, report(node, 3, 0, 0), later(4))).toEqual({ accepted: true });

    const latest = { epoch: 3, sequence: 0, report_sequence: 0 };
    expect(await recordReport(t.store, report(node, 2, 9, 9), later(5))).toEqual({ accepted: false, reason: 'older', latest });
    expect(await recordReport(t.store, report(node, 3, 0, 0), later(6))).toEqual({ accepted: false, reason: 'duplicate', latest });
    expect(await recordReport(t.store, report(node, 1, 99, 99), later(7))).toEqual({ accepted: false, reason: 'older', latest });

    const counts = (await reportRefusalCounts(t.store)).filter((row) => row.node === node);
    expect(counts).toEqual([
      { node, reason: 'duplicate', count: 1, first_at: later(6), last_at: later(6) },
      { node, reason: 'older', count: 2, first_at: later(5), last_at: later(7) },
    ]);
    const [kept] = await t.store.query<{ count: number }>('SELECT count(*) AS count FROM reports WHERE node = $1', [node]);
    expect(kept?.count).toBe(4);
  });

  test('a kept report refreshes what the node owns, its version and last seen; a refused one does not', async () => {
    const node = await newNode();
    await recordReport(t.store, { ...report(node, 1, 1, 1, ['/etc/a']), version_running: '0.2.0' }, later(10));
    await recordReport(t.store, { ...report(node, 1, 1, 0, ['/etc/stale']), version_running: '0.0.1' }, later(20));
    const record = await getNode(t.store, node);
    expect(record).toMatchObject({ version_running: '0.2.0', last_seen_at: later(10), owned_at: later(10) });
    expect(record?.owned?.resources.map((resource) => resource.key)).toEqual(['file:/etc/a']);
  });

  test('of reports from one node handled at once, each is compared with the one kept before it', async () => {
    const node = await newNode();
    const results = await Promise.all(Array.from({ length: 8 }, () => recordReport(t.store, report(node, 1, 1, 1), later(30))));
    expect(results.filter((result) => result.accepted)).toHaveLength(1);
    expect(results.filter((result) => !result.accepted && result.reason === 'duplicate')).toHaveLength(7);
  });

  test('counts a report from a node the store does not know under the one unknown sender, not under the name it gave', async () => {
    const before = (await reportRefusalCounts(t.store)).find((row) => row.node === UNKNOWN_SENDER && row.reason === 'unknown_node')?.count ?? 0;
    expect(await recordReport(t.store, report('stranger', 1, 1, 1), later(40))).toEqual({ accepted: false, reason: 'unknown_node' });
    const counts = await reportRefusalCounts(t.store);
    expect(counts.find((row) => row.node === 'stranger')).toBeUndefined();
    expect(Number(counts.find((row) => row.node === UNKNOWN_SENDER && row.reason === 'unknown_node')?.count)).toBe(Number(before) + 1);
  });

  test('a thousand invented names make one unknown-sender row, while a real node is counted under its own name', async () => {
    const node = await newNode();
    const rowsBefore = (await reportRefusalCounts(t.store)).length;
    for (let index = 0; index < 1000; index += 1) await countRefusalOf(t.store, `invented-${index}`, 'malformed', later(50));
    await countRefusalOf(t.store, node, 'malformed', later(51));
    const counts = await reportRefusalCounts(t.store);
    expect(counts.filter((row) => row.node.startsWith('invented-'))).toEqual([]);
    expect(Number(counts.find((row) => row.node === UNKNOWN_SENDER && String(row.reason) === 'malformed')?.count)).toBeGreaterThanOrEqual(1000);
    expect(counts.find((row) => row.node === node && String(row.reason) === 'malformed')).toMatchObject({ count: expect.anything() });
    expect(counts.length).toBeLessThanOrEqual(rowsBefore + 2);
  });
});
