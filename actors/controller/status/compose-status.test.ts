import { LeaseGate } from '../lease/lease-gate';
import { countRefusalOf, UNKNOWN_SENDER } from '../store/reports.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { composeStatus, type StatusSources } from './compose-status';
import { formatStatus } from './format-status';

describe('composeStatus', () => {
  const t = useTestStore('postgres');

  function sources(leaseHolder: StatusSources['leaseHolder'], gate = new LeaseGate()): StatusSources {
    return { store: t.store, gate, leaseHolder, tree: () => undefined, controller: 'status-test:1', now: () => new Date() };
  }

  test('says the lease key holds a value no controller wrote, rather than that nobody holds it', async () => {
    const gate = new LeaseGate();
    gate.note('the lease key holds a value no controller wrote (revision 7, 12 bytes); acting stopped until it is given back or expires');
    const status = await composeStatus(sources(async () => ({ holder: null, revision: 7 }), gate));
    expect(status.lease).toMatchObject({ state: 'standing by', holder: null, note: expect.stringContaining('a value no controller wrote') });
    expect(status.problems).toContainEqual({ kind: 'lease', subject: 'lease', detail: expect.stringContaining('the lease key holds a value no controller wrote (revision 7)') });
    expect(formatStatus(status, new Date())).toContain('a value no controller wrote');
  });

  test('shows refusals from names the store does not know under one unknown sender, never under those names', async () => {
    for (const name of ['made-up-1', 'made-up-2', 'made-up-3']) await countRefusalOf(t.store, name, 'malformed', new Date());
    const status = await composeStatus(sources(async () => null));
    expect(status.refused_reports.by_node.filter((row) => row.node.startsWith('made-up'))).toEqual([]);
    expect(status.refused_reports.by_node).toContainEqual(expect.objectContaining({ node: UNKNOWN_SENDER, reason: 'malformed', count: 3 }));
  });
});
