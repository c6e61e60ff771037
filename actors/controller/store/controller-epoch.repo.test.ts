import { raiseEpochFloor, readEpochFloor } from './controller-epoch.repo';
import { STORE_KINDS, useTestStore } from './testing/use-test-store';

const T0 = new Date('2026-12-01T10:00:00.000Z');

describe.each(STORE_KINDS)('the controller epoch floor on %s', (kind) => {
  const t = useTestStore(kind);

  test('has no floor before any controller acted, then only ever rises', async () => {
    expect(await readEpochFloor(t.store)).toBeUndefined();
    expect(await raiseEpochFloor(t.store, 7, 'ctl-a', T0)).toEqual({ raised: true, floor: { epoch: 7, holder: 'ctl-a', raised_at: T0 } });
    expect(await raiseEpochFloor(t.store, 3, 'ctl-b', new Date(T0.getTime() + 1000))).toEqual({ raised: false, floor: { epoch: 7, holder: 'ctl-a', raised_at: T0 } });
    expect(await raiseEpochFloor(t.store, 7, 'ctl-b', T0)).toMatchObject({ raised: false });
    expect(await raiseEpochFloor(t.store, 12, 'ctl-b', T0)).toMatchObject({ raised: true, floor: { epoch: 12, holder: 'ctl-b' } });
    expect((await readEpochFloor(t.store))?.epoch).toBe(12);
  });

  test('keeps one row, whatever is inserted by hand', async () => {
    await expect(t.store.query("INSERT INTO controller_epoch (singleton, epoch, holder, raised_at) VALUES (false, 1, 'x', now())")).rejects.toMatchObject({ code: '23514' });
  });
});
