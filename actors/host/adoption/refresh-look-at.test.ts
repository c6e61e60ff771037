import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BriefingLine } from '../../../schema/briefing';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { lookAtFor } from './look-at';
import { refreshLookAt } from './refresh-look-at';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'mesh-look-at-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

const kept: BriefingLine = { status: 'kept', subject: 'file:/etc/docker/daemon.json', detail: "content differs — the machine's value wins, nothing was written" };

/** A store whose saves are counted, so a refresh that changes nothing can be seen to write nothing. */
class CountingStore extends HostStore {
  saves = 0;
  override async save(state: HostState): Promise<void> {
    this.saves += 1;
    await super.save(state);
  }
}

describe('refreshLookAt', () => {
  test('writes the prose the stored lines call for, durably', async () => {
    const store = new CountingStore(dir);
    const state = new StateHandle(store, { ...emptyHostState(), briefing: { node: 'workstation', adopted_at: '2026-08-27T14:02:00Z', lines: [kept], look_at: [] } });
    await refreshLookAt(state);
    expect((await store.load()).state.briefing?.look_at).toEqual(lookAtFor([kept]));
    expect(store.saves).toBe(1);
  });

  test('writes nothing when there is no briefing or its prose is current', async () => {
    const store = new CountingStore(dir);
    await refreshLookAt(new StateHandle(store, emptyHostState()));
    const current = { ...emptyHostState(), briefing: { node: 'workstation', adopted_at: '2026-08-27T14:02:00Z', lines: [kept], look_at: lookAtFor([kept]) } };
    await refreshLookAt(new StateHandle(store, current));
    expect(store.saves).toBe(0);
  });
});
