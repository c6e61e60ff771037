import { nkeySeedOf } from '../../shared/crypto';
import { getNode } from '../store/nodes.repo';
import { eventually, useTestController } from './testing/test-controller';

describe('re-enrolling a machine as the same node', () => {
  const t = useTestController('postgres');

  test('keeps the name and the address, takes the new keys, starts from a fresh overlay, and hands back what the node owned', async () => {
    const first = t.machine('alpha');
    const token = await t.issue();
    await t.enrol(token, t.requestFor(first, token));
    const old = await t.connectNode('alpha', first);
    const overlay = await t.nextDeclaration(old, 'alpha');
    await t.report(old, overlay, { sequence: 1, report_sequence: 1 });
    const full = await t.nextDeclaration(old, 'alpha');
    const ownedReport = await t.report(old, full, { sequence: 2, report_sequence: 2 });
    await eventually(async () => ((await getNode(t.ctx.store, 'alpha'))?.owned?.resources.length === full.declaration.resources.length ? true : undefined), 'the owned copy');

    // The machine lost its store: the operator issues a token for the node, which revokes the old identity.
    const again = await t.issue({ forNode: 'alpha' });
    await expect(t.broker.connectAsNode('alpha', nkeySeedOf(first.identity.secret_key), { reconnect: false })).rejects.toThrow(/Authorization/i);
    const second = t.machine('some-new-hostname');
    expect(await t.enrol(again, t.requestFor(second, again))).toEqual({ ok: true, node: 'alpha' });
    expect(await getNode(t.ctx.store, 'alpha')).toMatchObject({ lifecycle_state: 'enrolled', public_key: second.identity.public_key, nkey: second.identity.nkey_public });

    const fresh = await t.connectNode('alpha', second);
    const newOverlay = await t.nextDeclaration(fresh, 'alpha');
    // Not the old full declaration that was waiting: a new overlay, with the new key, at the same address.
    expect(newOverlay.declaration.kind).toBe('overlay');
    expect(newOverlay.declaration.generation).toBeGreaterThan(full.declaration.generation);
    expect(newOverlay.declaration.overlay).toMatchObject({ address: '10.77.0.1/32', public_key: second.wireguard_public_key });
    expect(newOverlay.declaration.previously_owned).toBeUndefined();

    await t.report(fresh, newOverlay, { sequence: 1, report_sequence: 1 });
    const newFull = await t.nextDeclaration(fresh, 'alpha');
    expect(newFull.declaration.kind).toBe('full');
    expect(newFull.declaration.previously_owned).toEqual(ownedReport.owned);
    expect((await t.ctx.store.query<{ previously_owned: unknown }>('SELECT previously_owned FROM nodes WHERE name = $1', ['alpha']))[0]?.previously_owned).toBeNull();
  });
});
