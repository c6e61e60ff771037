import { generateTokenCredentials, tokenSecretHash } from '../../shared/crypto/token';
import { NodeNotFound } from './node-not-found';
import { upsertNode, getNode } from './nodes.repo';
import { STORE_KINDS, useTestStore } from './testing/use-test-store';
import { consumeToken, getToken, issueToken, type IssueTokenRequest } from './tokens.repo';

const ISSUED = new Date('2026-12-01T10:00:00.000Z');
const MINUTE = 60_000;
const at = (minutes: number): Date => new Date(ISSUED.getTime() + minutes * MINUTE);

function newToken(forNode: string | null = null): IssueTokenRequest & { secret: string } {
  const { token_id, secret } = generateTokenCredentials();
  return { id: token_id, secret, secret_hash: tokenSecretHash(secret), for_node: forNode, issued_at: ISSUED, expires_at: at(15) };
}

const KEY = 'A'.repeat(43) + '=';
const NKEY = `U${'A'.repeat(55)}`;

describe.each(STORE_KINDS)('tokens on %s', (kind) => {
  const t = useTestStore(kind);

  test('a token is consumed once, with its secret, before it expires', async () => {
    const token = newToken();
    await issueToken(t.store, token);
    const first = await consumeToken(t.store, token.id, token.secret_hash, at(5));
    expect(first).toEqual({ ok: true, token: expect.objectContaining({ id: token.id, for_node: null, consumed_at: at(5), expires_at: at(15) }) });
    const second = await consumeToken(t.store, token.id, token.secret_hash, at(6));
    expect(second).toEqual({ ok: false, reason: 'already_used', token: expect.objectContaining({ consumed_at: at(5) }) });
  });

  test('of 20 attempts at once with one token, exactly one succeeds and the others are told it was already used', async () => {
    const token = newToken();
    await issueToken(t.store, token);
    const results = await Promise.all(Array.from({ length: 20 }, () => consumeToken(t.store, token.id, token.secret_hash, at(1))));
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.filter((result) => !result.ok).map((result) => (result.ok ? 'ok' : result.reason))).toEqual(Array(19).fill('already_used'));
  });

  test('refuses a token whose time ran out, from its expiry instant on', async () => {
    const token = newToken();
    await issueToken(t.store, token);
    expect(await consumeToken(t.store, token.id, token.secret_hash, at(15))).toEqual({ ok: false, reason: 'expired', token: expect.objectContaining({ consumed_at: null }) });
    expect(await consumeToken(t.store, token.id, token.secret_hash, at(60))).toMatchObject({ ok: false, reason: 'expired' });
    expect((await getToken(t.store, token.id))?.consumed_at).toBeNull();
  });

  test('refuses a wrong secret, and does not say whether the token was used or has expired', async () => {
    const token = newToken();
    await issueToken(t.store, token);
    const wrong = tokenSecretHash(generateTokenCredentials().secret);
    expect(await consumeToken(t.store, token.id, wrong, at(1))).toEqual({ ok: false, reason: 'wrong_secret' });
    expect((await getToken(t.store, token.id))?.consumed_at).toBeNull();

    await consumeToken(t.store, token.id, token.secret_hash, at(2));
    expect(await consumeToken(t.store, token.id, wrong, at(3))).toEqual({ ok: false, reason: 'wrong_secret' });
    expect(await consumeToken(t.store, token.id, wrong, at(99))).toEqual({ ok: false, reason: 'wrong_secret' });
  });

  test('refuses a token id it never issued', async () => {
    const token = newToken();
    expect(await consumeToken(t.store, token.id, token.secret_hash, at(1))).toEqual({ ok: false, reason: 'unknown' });
  });

  test('keeps the secret only as its hash', async () => {
    const token = newToken();
    await issueToken(t.store, token);
    const [row] = await t.store.query<Record<string, unknown>>('SELECT * FROM tokens WHERE id = $1', [token.id]);
    expect(row?.secret_hash).toBe(token.secret_hash);
    expect(JSON.stringify(row)).not.toContain(token.secret);
  });

  test('a token for a node revokes the identity it holds and records which broker user was revoked', async () => {
    const name = `ws-${kind}`;
    await upsertNode(t.store, { name, lifecycle_state: 'enrolled', public_key: KEY, nkey: NKEY }, ISSUED);
    const token = newToken(name);
    const issued = await issueToken(t.store, token);
    expect(issued).toMatchObject({ id: token.id, for_node: name, revoked_identity: NKEY, consumed_at: null });
    expect(await getNode(t.store, name)).toMatchObject({ lifecycle_state: 'revoked', public_key: null, nkey: null });

    // A second token for the node finds no identity left to revoke.
    expect(await issueToken(t.store, newToken(name))).toMatchObject({ revoked_identity: null });
  });

  test('a token for a node with no record is refused, and nothing is kept', async () => {
    const token = newToken('no-such-node');
    await expect(issueToken(t.store, token)).rejects.toThrow(NodeNotFound);
    await expect(issueToken(t.store, token)).rejects.toThrow(/no-such-node/);
    expect(await getToken(t.store, token.id)).toBeUndefined();
  });

  test('the schema refuses a token that expires before it is issued', async () => {
    const token = { ...newToken(), expires_at: at(-1) };
    await expect(issueToken(t.store, token)).rejects.toMatchObject({ code: '23514' });
  });
});
