import type { Profile } from '../../../schema/profile';
import { getNode, listNodes, recordLastSeen, upsertNode } from './nodes.repo';
import { STORE_KINDS, useTestStore } from './testing/use-test-store';

const T0 = new Date('2026-12-01T10:00:00.000Z');
const later = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
const KEY = 'B'.repeat(43) + '=';
const NKEY = `U${'B'.repeat(55)}`;

describe.each(STORE_KINDS)('nodes on %s', (kind) => {
  const t = useTestStore(kind);

  test('creates a node record and reads back what was written, JSON and times included', async () => {
    const profile = { kind: 'server' } as unknown as Profile;
    const created = await upsertNode(t.store, { name: 'alpha', lifecycle_state: 'enrolled', public_key: KEY, nkey: NKEY, profile, version_running: '0.1.0', enrolled_at: T0 }, T0);
    expect(created).toMatchObject({ name: 'alpha', lifecycle_state: 'enrolled', public_key: KEY, nkey: NKEY, profile, version_running: '0.1.0', enrolled_at: T0, updated_at: T0, last_seen_at: null, owned: null });
    expect(await getNode(t.store, 'alpha')).toEqual(created);
  });

  test('updating keeps the fields not given and clears those given as null', async () => {
    await upsertNode(t.store, { name: 'bravo', lifecycle_state: 'enrolled', public_key: KEY.replace('B', 'C'), nkey: NKEY.replace('B', 'C'), version_running: '0.1.0' }, T0);
    const updated = await upsertNode(t.store, { name: 'bravo', lifecycle_state: 'released', public_key: null, nkey: null }, later(60));
    expect(updated).toMatchObject({ lifecycle_state: 'released', public_key: null, nkey: null, version_running: '0.1.0', created_at: T0, updated_at: later(60) });
  });

  test('refuses a state that disagrees with the identity: an enrolled node without a key', async () => {
    await expect(upsertNode(t.store, { name: 'charlie', lifecycle_state: 'enrolled' }, T0)).rejects.toMatchObject({ code: '23514' });
    expect(await getNode(t.store, 'charlie')).toBeUndefined();
  });

  test('refuses a name that is not one DNS label', async () => {
    await expect(upsertNode(t.store, { name: 'Not_A_Label', lifecycle_state: 'revoked' }, T0)).rejects.toMatchObject({ code: '23514' });
  });

  test('last seen moves forward only, and says when there is no such node', async () => {
    await upsertNode(t.store, { name: 'delta', lifecycle_state: 'revoked' }, T0);
    expect(await recordLastSeen(t.store, 'delta', later(30))).toBe(true);
    expect(await recordLastSeen(t.store, 'delta', later(10))).toBe(true);
    expect((await getNode(t.store, 'delta'))?.last_seen_at).toEqual(later(30));
    expect(await recordLastSeen(t.store, 'nobody', later(30))).toBe(false);
  });

  test('lists the nodes by name', async () => {
    await upsertNode(t.store, { name: 'zulu', lifecycle_state: 'revoked' }, T0);
    await upsertNode(t.store, { name: 'echo', lifecycle_state: 'revoked' }, T0);
    const names = (await listNodes(t.store)).map((node) => node.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['echo', 'zulu']));
  });
});
