import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { HostStore } from '../store/host-store';
import { waitForIdentity } from './wait-for-identity';

let dir: string;
beforeAll(async () => { await ready(); });
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'wait-identity-'));
  await new HostStore(dir).save(emptyHostState());
});
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

describe('a hosted machine waiting for enrolment', () => {
  test('notices an identity written to the store at once, without waiting for its next look', async () => {
    const started = Date.now();
    const waiting = waitForIdentity(dir, new AbortController().signal, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await new HostStore(dir).save({ ...emptyHostState(), identity: { node: 'alpha', ...generateNodeIdentity() } });
    expect(await waiting).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('keeps waiting while the store holds no identity, and stops when told', async () => {
    const stop = new AbortController();
    const waiting = waitForIdentity(dir, stop.signal, 20);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await new HostStore(dir).save({ ...emptyHostState(), sequence: 3 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop.abort();
    expect(await waiting).toBe(false);
  });

  test('waiting past a revoked identity, the same one written again does not end it; another one does', async () => {
    const revoked = { node: 'alpha', ...generateNodeIdentity() };
    await new HostStore(dir).save({ ...emptyHostState(), identity: revoked });
    const stop = new AbortController();
    let ended = false;
    const waiting = waitForIdentity(dir, stop.signal, 20, revoked.nkey_public).then((found) => { ended = true; return found; });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await new HostStore(dir).save({ ...emptyHostState(), identity: revoked, sequence: 4 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ended).toBe(false);
    await new HostStore(dir).save({ ...emptyHostState(), identity: { node: 'alpha', ...generateNodeIdentity() } });
    expect(await waiting).toBe(true);
  });
});
