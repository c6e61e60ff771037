import { randomBytes } from 'node:crypto';
import type { EnrolRequest } from '../../../schema/enrolment';
import { generateNodeIdentity, generateTokenCredentials, ready, tokenSecretHash } from '../../shared/crypto';
import { useTestStore } from '../store/testing/use-test-store';
import { getToken, issueToken } from '../store/tokens.repo';
import { enrolInStore } from './enrol-in-store';
import { overlayPool } from './overlay-pool';

const NOW = new Date('2026-12-01T10:00:00.000Z');

// The proof is checked before the store is asked: these requests carry none worth checking.
function request(hostname: string, token: { token_id: string; secret: string }, identity = generateNodeIdentity()): EnrolRequest {
  return {
    format: 'mesh-enrol-1', token_id: token.token_id, secret: token.secret, public_key: identity.public_key, nkey_public: identity.nkey_public,
    wireguard_public_key: randomBytes(32).toString('base64'), hostname,
    profile: { os: { id: 'arch' }, arch: 'x86_64', kernel: '6.12', init: 'systemd', package_manager: 'pacman', container_runtime: 'podman', graphical_session: true, host_kind: 'resident', hostname },
    inventory: { packages: [], services: [], containers: [], collected_at: NOW.toISOString() },
    version_running: '0.1.0', proof: `${'A'.repeat(86)}==`,
  };
}

describe('deciding an enrolment in the store', () => {
  const t = useTestStore('postgres');
  beforeAll(() => ready());

  const token = async (forNode: string | null = null): Promise<{ token_id: string; secret: string }> => {
    const credentials = generateTokenCredentials();
    await issueToken(t.store, { id: credentials.token_id, secret_hash: tokenSecretHash(credentials.secret), for_node: forNode, issued_at: NOW, expires_at: new Date(NOW.getTime() + 900_000) });
    return credentials;
  };

  test('refuses keys another node holds, and leaves the token unused', async () => {
    const identity = generateNodeIdentity();
    const first = await token();
    expect(await enrolInStore(t.store, request('alpha', first, identity), overlayPool('10.1.0.0/24'), NOW)).toMatchObject({ ok: true, node: 'alpha' });
    const second = await token();
    const decision = await enrolInStore(t.store, request('beta', second, identity), overlayPool('10.1.0.0/24'), NOW);
    expect(decision).toMatchObject({ ok: false, refusal: 'malformed' });
    expect(decision.ok === false && decision.detail).toMatch(/node alpha already holds/);
    expect((await getToken(t.store, second.token_id))?.consumed_at).toBeNull();
  });

  test('refuses when the pool has no address left, and leaves the token unused', async () => {
    const pool = overlayPool('10.2.0.0/30');
    expect(await enrolInStore(t.store, request('one', await token()), pool, NOW)).toMatchObject({ ok: true, overlay_address: '10.2.0.1' });
    expect(await enrolInStore(t.store, request('two', await token()), pool, NOW)).toMatchObject({ ok: true, overlay_address: '10.2.0.2' });
    const third = await token();
    expect(await enrolInStore(t.store, request('three', third), pool, NOW)).toMatchObject({ ok: false, refusal: 'unavailable', detail: expect.stringContaining('10.2.0.0/30') });
    expect((await getToken(t.store, third.token_id))?.consumed_at).toBeNull();
  });

  test('a re-enrolment keeps the node\'s address, sets its owned copy aside, and starts its accounts again', async () => {
    const pool = overlayPool('10.3.0.0/24');
    expect(await enrolInStore(t.store, request('gamma', await token()), pool, NOW)).toMatchObject({ ok: true, node: 'gamma', overlay_address: '10.3.0.1' });
    const owned = { resources: [{ key: 'file:/etc/motd', shape: 'file', digest: 'a'.repeat(64), recorded_at: NOW.toISOString() }] };
    await t.store.query('UPDATE nodes SET owned = $2 WHERE name = $1', ['gamma', JSON.stringify(owned)]);
    await t.store.query(
      `INSERT INTO reports (node, epoch, sequence, report_sequence, generation, results, version_running, sent_at, received_at)
       VALUES ('gamma', 1, 5, 9, 2, '[]', '0.1.0', $1, $1)`,
      [NOW],
    );
    // Another node takes the next address meanwhile: gamma keeps its own.
    await enrolInStore(t.store, request('delta', await token()), pool, NOW);
    const again = await token('gamma');
    expect(await enrolInStore(t.store, request('renamed-machine', again), pool, NOW)).toMatchObject({ ok: true, node: 'gamma', reenrolled: true, overlay_address: '10.3.0.1' });
    const [row] = await t.store.query<{ previously_owned: unknown; lifecycle_state: string }>('SELECT previously_owned, lifecycle_state FROM nodes WHERE name = $1', ['gamma']);
    expect(row).toEqual({ previously_owned: owned, lifecycle_state: 'enrolled' });
    expect(await t.store.query('SELECT 1 FROM reports WHERE node = $1', ['gamma'])).toHaveLength(0);
  });
});
