import { EMPTY_PLAN_CONTEXT } from '../../../machines/plan.machine';
import { insertRevision } from '../modules/modules.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { getPlan, insertPlan, listPlans, openPlans, writePlan } from './plans.repo';

describe('plans in the store', () => {
  const t = useTestStore('postgres');
  const at = new Date('2026-12-01T10:00:00Z');
  const context = { ...EMPTY_PLAN_CONTEXT, targets: ['a', 'b'], first: 'a' };

  beforeAll(async () => {
    await insertRevision(t.store, { name: 'web', version: '1.0', upgrade_policy: 'one-first', resources: [], digest: 'a'.repeat(64), source: null, added_at: at });
    await insertRevision(t.store, { name: 'web', version: '1.1', upgrade_policy: 'one-first', resources: [], digest: 'b'.repeat(64), source: null, added_at: at });
  });

  test('a revision takes the next place in its module\'s order', async () => {
    const rows = await t.store.query<{ version: string; seq: number }>("SELECT version, seq FROM module_revisions WHERE name = 'web' ORDER BY seq");
    expect(rows).toEqual([{ version: '1.0', seq: 1 }, { version: '1.1', seq: 2 }]);
  });

  test('a write names the revision it read: a stale one changes nothing', async () => {
    const plan = await insertPlan(t.store, { module: 'web', version: '1.1', context, epoch: 5, at });
    expect(plan).toMatchObject({ state: 'opening', revision: 1, epoch: 5, ended_at: null });
    const written = await writePlan(t.store, plan.id, 1, 5, { state: 'sendingFirst', context, at });
    expect(written).toMatchObject({ state: 'sendingFirst', revision: 2 });
    expect(await writePlan(t.store, plan.id, 1, 5, { state: 'stopped', context, at })).toBeUndefined();
    expect((await getPlan(t.store, plan.id))?.state).toBe('sendingFirst');
  });

  test('a write under an epoch lower than the last write\'s changes nothing', async () => {
    const plan = await insertPlan(t.store, { module: 'web', version: '1.1', context, epoch: 5, at });
    expect(await writePlan(t.store, plan.id, 1, 7, { state: 'held', context, at })).toMatchObject({ epoch: 7, revision: 2 });
    expect(await writePlan(t.store, plan.id, 2, 6, { state: 'closed', context: { ...context, note: 'closed by hand' }, at })).toBeUndefined();
    expect((await getPlan(t.store, plan.id))?.state).toBe('held');
  });

  test('an ended plan is stamped, keeps its note, and is no longer listed as open', async () => {
    const plan = await insertPlan(t.store, { module: 'web', version: '1.1', context, epoch: 5, at });
    const ended = await writePlan(t.store, plan.id, 1, 5, { state: 'superseded', context: { ...context, note: 'superseded by plan 9', supersededBy: null }, at });
    expect(ended).toMatchObject({ ended_at: at, note: 'superseded by plan 9' });
    expect((await openPlans(t.store)).map((row) => row.id)).not.toContain(plan.id);
    expect((await listPlans(t.store, { all: false, limit: 50 })).map((row) => row.id)).not.toContain(plan.id);
    expect((await listPlans(t.store, { all: true, limit: 50 })).map((row) => row.id)).toContain(plan.id);
  });
});
