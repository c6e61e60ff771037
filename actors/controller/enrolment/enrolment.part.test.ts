import { brokerPasswordFor } from '../../shared/crypto';
import { getNode } from '../store/nodes.repo';
import { getToken } from '../store/tokens.repo';
import { STORE_KINDS } from '../store/testing/use-test-store';
import { eventually, useTestController } from './testing/test-controller';

describe.each(STORE_KINDS)('enrolment on %s', (kind) => {
  const t = useTestController(kind);

  test('a machine with a real token becomes a node: its name, its own broker user, and the overlay waiting on its queue', async () => {
    const token = await t.issue();
    const machine = t.machine('Alpha.example.net');
    const reply = await t.enrol(token, t.requestFor(machine, token));
    expect(reply).toEqual({ ok: true, node: 'alpha' });

    const record = await getNode(t.ctx.store, 'alpha');
    expect(record).toMatchObject({ lifecycle_state: 'enrolled', public_key: machine.identity.public_key, nkey: machine.identity.nkey_public, version_running: '0.1.0' });
    expect(record?.profile?.init).toBe('systemd');
    expect(record?.last_seen_at).not.toBeNull();
    expect((await getToken(t.ctx.store, token.token_id))?.consumed_at).not.toBeNull();

    const node = await t.connectNode('alpha', machine);
    const { declaration } = await t.nextDeclaration(node, 'alpha');
    expect(declaration).toMatchObject({ node: 'alpha', kind: 'overlay', epoch: 3, generation: 1 });
    expect(declaration.overlay).toMatchObject({ address: '10.77.0.1/32', public_key: machine.wireguard_public_key, listen_port: 51820, peers: [] });
    expect(declaration.resources.map((resource) => resource.shape)).toEqual(['file', 'file', 'service']);
    expect(declaration.resources[0]).toMatchObject({ shape: 'file', path: '/etc/wireguard/mesh0.conf', mode: '0600' });
  });

  test('the token\'s broker user is gone once the machine has its answer', async () => {
    const token = await t.issue();
    const machine = t.machine('bravo');
    expect((await t.enrol(token, t.requestFor(machine, token))).ok).toBe(true);
    expect(await t.ctx.store.query('SELECT 1 FROM tokens WHERE id = $1 AND broker_user_removed_at IS NOT NULL', [token.token_id])).toHaveLength(1);
    await expect(t.broker.connectAsEnrolment(token.token_id, brokerPasswordFor(token.secret, token.token_id), { reconnect: false })).rejects.toThrow(/Authorization/i);
  });

  test('a report that the overlay applied brings the full declaration, a higher generation', async () => {
    const token = await t.issue();
    const machine = t.machine('charlie');
    expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: 'charlie' });
    const node = await t.connectNode('charlie', machine);
    const overlay = await t.nextDeclaration(node, 'charlie');
    expect(overlay.declaration.kind).toBe('overlay');
    await t.report(node, overlay, { sequence: 1, report_sequence: 1 });

    const full = await t.nextDeclaration(node, 'charlie');
    expect(full.declaration.kind).toBe('full');
    expect(full.declaration.generation).toBeGreaterThan(overlay.declaration.generation);
    expect(full.declaration.overlay).toEqual(overlay.declaration.overlay);
    const record = await getNode(t.ctx.store, 'charlie');
    expect(record?.owned?.resources.map((owned) => owned.key)).toEqual(overlay.declaration.resources.map((resource) => `${resource.shape}:${'path' in resource ? resource.path : resource.name}`));
  });

  test('an overlay that failed holds the full declaration back, and the node\'s record says why', async () => {
    const token = await t.issue();
    const machine = t.machine('delta', 'none');
    expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: 'delta' });
    const node = await t.connectNode('delta', machine);
    const overlay = await t.nextDeclaration(node, 'delta');
    // No init the mesh drives: the files alone.
    expect(overlay.declaration.resources.map((resource) => resource.shape)).toEqual(['file', 'file']);
    await t.report(node, overlay, { sequence: 1, report_sequence: 1 }, 'failed');

    const held = await eventually(async () => (await t.ctx.store.query<{ full_held: string | null }>('SELECT full_held FROM nodes WHERE name = $1', ['delta']))[0]?.full_held ?? undefined, 'the hold');
    expect(held).toContain('file:/etc/wireguard/mesh0.conf');
    await t.settled();
    const sent = await t.ctx.store.query<{ kind: string }>('SELECT kind FROM declarations WHERE node = $1 ORDER BY generation', ['delta']);
    expect(sent.map((row) => row.kind)).not.toContain('full');
  });

  test('refuses a used token, saying it was used and to issue another', async () => {
    const token = await t.issue();
    expect((await t.enrol(token, t.requestFor(t.machine('echo'), token))).ok).toBe(true);
    // The first machine's answer retired the token's broker user; give it back to ask again.
    await t.ctx.broker.addEnrolment(token.token_id, brokerPasswordFor(token.secret, token.token_id));
    const reply = await t.enrol(token, t.requestFor(t.machine('foxtrot'), token));
    expect(reply).toMatchObject({ ok: false, refusal: 'token_used' });
    expect(reply.ok === false && reply.message).toMatch(/already used/);
    expect(reply.ok === false && reply.next).toMatch(/mesh-control token issue/);
    expect(await getNode(t.ctx.store, 'foxtrot')).toBeUndefined();
  });

  test('refuses an expired token', async () => {
    const token = await t.issue({ ttlMs: 60_000 });
    t.advanceClock(61_000);
    try {
      const reply = await t.enrol(token, t.requestFor(t.machine('golf'), token));
      expect(reply).toMatchObject({ ok: false, refusal: 'token_expired' });
      expect(reply.ok === false && reply.message).toMatch(/expired/);
    } finally {
      t.advanceClock(-61_000);
    }
  });

  test('refuses a wrong secret and leaves the token usable', async () => {
    const token = await t.issue();
    const machine = t.machine('hotel');
    const forged = t.requestFor(machine, { token_id: token.token_id, secret: 'A'.repeat(43) });
    expect(await t.enrol(token, forged)).toMatchObject({ ok: false, refusal: 'token_secret_wrong' });
    expect((await getToken(t.ctx.store, token.token_id))?.consumed_at).toBeNull();
    expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: 'hotel' });
  });

  test('refuses a request whose proof was not made by the key it presents, and uses nothing', async () => {
    const token = await t.issue();
    const machine = t.machine('india');
    const someoneElse = t.machine('india');
    const request = { ...t.requestFor(machine, token), proof: t.requestFor(someoneElse, token).proof };
    expect(await t.enrol(token, request)).toMatchObject({ ok: false, refusal: 'proof_invalid' });
    const altered = { ...t.requestFor(machine, token), hostname: 'juliet' };
    expect(await t.enrol(token, altered)).toMatchObject({ ok: false, refusal: 'proof_invalid' });
    expect((await getToken(t.ctx.store, token.token_id))?.consumed_at).toBeNull();
  });

  test('refuses a request that does not match the contract, naming the field', async () => {
    const token = await t.issue();
    const request: Record<string, unknown> = { ...t.requestFor(t.machine('kilo'), token) };
    delete request.wireguard_public_key;
    const reply = await t.enrol(token, request);
    expect(reply).toMatchObject({ ok: false, refusal: 'malformed' });
    expect(reply.ok === false && reply.message).toContain('wireguard_public_key');
  });

  test('refuses a request naming another token than its subject\'s', async () => {
    const token = await t.issue();
    const other = await t.issue();
    const reply = await t.enrol(token, t.requestFor(t.machine('lima'), other));
    expect(reply).toMatchObject({ ok: false, refusal: 'malformed' });
    expect((await getToken(t.ctx.store, other.token_id))?.consumed_at).toBeNull();
  });

  test('a machine asking again with its token, because its answer was lost, is told the same name', async () => {
    const token = await t.issue();
    const machine = t.machine('mike');
    const request = t.requestFor(machine, token);
    expect(await t.enrol(token, request)).toEqual({ ok: true, node: 'mike' });
    await t.ctx.broker.addEnrolment(token.token_id, brokerPasswordFor(token.secret, token.token_id));
    expect(await t.enrol(token, request)).toEqual({ ok: true, node: 'mike' });
    expect((await t.ctx.store.query('SELECT name FROM nodes WHERE name LIKE $1', ['mike%'])).length).toBe(1);
  });

  test('a second machine with the same host name gets the name numbered', async () => {
    const first = await t.issue();
    const second = await t.issue();
    expect(await t.enrol(first, t.requestFor(t.machine('november'), first))).toEqual({ ok: true, node: 'november' });
    expect(await t.enrol(second, t.requestFor(t.machine('November.lan'), second))).toEqual({ ok: true, node: 'november-2' });
  });
});
