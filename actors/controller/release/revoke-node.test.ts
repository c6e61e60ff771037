import { nkeySeedOf } from '../../shared/crypto';
import { OperatorError } from '../../shared/operator-error';
import { useTestController, type TestMachine } from '../enrolment/testing/test-controller';
import { getNode } from '../store/nodes.repo';
import { issueEnrolmentToken } from '../tokens/issue-enrolment-token';
import type { RevokeOutcome } from './revoke-node';

// `node.revoke` against a real broker (TLS, nkey users) and a real PostgreSQL: a connected node
// is cut off at once, and everything the mesh issued for it is listed.

describe('revoking a gone node (node.revoke)', () => {
  const t = useTestController('postgres');

  const enrolled = async (name: string): Promise<TestMachine> => {
    const token = await t.issue();
    const machine = t.machine(name);
    await t.enrol(token, t.requestFor(machine, token));
    return machine;
  };
  const revoke = async (node: string, why?: string): Promise<RevokeOutcome> =>
    (await t.verbs.call(t.ctx, 'node.revoke', { node, ...(why === undefined ? {} : { why }) })).result as RevokeOutcome;
  const refusal = async (node: string, why?: string): Promise<OperatorError> => {
    try {
      await revoke(node, why);
    } catch (error) {
      if (error instanceof OperatorError) return error;
      throw error;
    }
    throw new Error(`revoking ${node} was not refused`);
  };

  test('drops the node\'s live connection, refuses it again, ends its open tokens and lists what the mesh issued for it', async () => {
    const first = await t.issue();
    await t.enrol(first, t.requestFor(t.machine('tango'), first));
    // A token issued for the node and never used, then another used by the machine: the node
    // holds an identity again, and the first is still open.
    const open = await t.issue({ forNode: 'tango', ttlMs: 60 * 60_000 });
    const used = await t.issue({ forNode: 'tango' });
    const machine = t.machine('tango');
    expect(await t.enrol(used, t.requestFor(machine, used))).toMatchObject({ ok: true, node: 'tango' });
    const connection = await t.connectNode('tango', machine, { reconnect: false });

    const dropped = connection.closed();
    const outcome = await revoke('tango', 'stolen from the car');
    await dropped;
    expect(connection.isClosed()).toBe(true);
    await expect(t.broker.connectAsNode('tango', nkeySeedOf(machine.identity.secret_key), { reconnect: false })).rejects.toThrow(/Authorization/i);

    expect(outcome).toMatchObject({ node: 'tango', why: 'stolen from the car' });
    expect(outcome.credentials.filter((c) => c.kind !== 'token')).toEqual([
      expect.objectContaining({ kind: 'broker_user', id: machine.identity.nkey_public, state: 'removed' }),
      expect.objectContaining({ kind: 'overlay_key', id: machine.wireguard_public_key, state: 'dropped' }),
    ]);
    const tokens = Object.fromEntries(outcome.credentials.filter((c) => c.kind === 'token').map((c) => [c.id, c.state]));
    expect(tokens).toEqual({ [first.token_id]: 'used', [open.token_id]: 'revoked', [used.token_id]: 'used' });
    expect(outcome.not_issued).toMatch(/no certificates/);

    expect(await getNode(t.ctx.store, 'tango')).toMatchObject({ lifecycle_state: 'revoked', nkey: null, public_key: null });
    expect(await t.ctx.store.query('SELECT nkey, reason FROM dead_node_keys WHERE public_key = $1', [machine.identity.public_key])).toEqual([{ nkey: machine.identity.nkey_public, reason: 'revoked' }]);
    // The token that was open admits no one now: its broker user is gone with it.
    await expect(t.enrol(open, t.requestFor(t.machine('tango'), open))).rejects.toThrow(/Authorization/i);
  });

  test('a node revoked already, a released one and an unknown name are refused, each naming the next step', async () => {
    await enrolled('uniform');
    await revoke('uniform');
    const twice = await refusal('uniform');
    expect(twice.message).toMatch(/node uniform is revoked already/);
    expect(twice.next).toMatch(/mesh-control token issue --node uniform.*mesh-control node release uniform/);

    await t.verbs.call(t.ctx, 'node.release', { node: 'uniform' });
    expect((await refusal('uniform')).next).toMatch(/released node holds no identity/);

    const unknown = await refusal('no-such-node');
    expect(unknown).toMatchObject({ value: 'no-such-node' });
    expect(unknown.next).toMatch(/mesh-control nodes/);
  });

  test('a reason that is not one short line is refused, and nothing is revoked', async () => {
    await enrolled('victor');
    const refused = await refusal('victor', 'first line\nsecond line');
    expect(refused.message).toMatch(/--why must be one line/);
    expect((await getNode(t.ctx.store, 'victor'))?.lifecycle_state).toBe('enrolled');
  });

  test('a machine that lost its key is enrolled again: the old key is dead, what waited for it is said, and the key is refused if presented again', async () => {
    const first = await t.issue();
    const lost = t.machine('yankee');
    expect(await t.enrol(first, t.requestFor(lost, first))).toMatchObject({ ok: true, node: 'yankee' });
    // Sent its overlay, and it never reported: the machine died with its key.
    const connection = await t.connectNode('yankee', lost);
    const overlay = await t.nextDeclaration(connection, 'yankee');
    await connection.close();

    const issued = await issueEnrolmentToken(t.ctx, { forNode: 'yankee', ttlMs: 15 * 60_000 });
    expect(issued.cannot_seal_to).toEqual({
      dead_key: lost.identity.nkey_public,
      sealed: [],
      waiting: [{ generation: overlay.declaration.generation, kind: 'overlay', sent_at: expect.any(String) }],
    });
    expect(await t.ctx.store.query('SELECT node, reason FROM dead_node_keys WHERE nkey = $1', [lost.identity.nkey_public])).toEqual([{ node: 'yankee', reason: 'reissued' }]);

    // Whoever holds the lost key cannot come back in with it, even with a good token.
    const token = await t.issue({ forNode: 'yankee' });
    expect(await t.enrol(token, t.requestFor(lost, token))).toMatchObject({ ok: false, message: expect.stringMatching(/key of node yankee that is dead/) });
    expect(await t.enrol(token, t.requestFor(t.machine('yankee'), token))).toMatchObject({ ok: true, node: 'yankee' });
  });
});
