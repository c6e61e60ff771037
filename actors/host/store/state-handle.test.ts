import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { HostStore } from './host-store';
import { StateHandle } from './state-handle';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'state-handle-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

describe('the running host\'s state', () => {
  test('a staged change is seen at once, written by the next update, not before', async () => {
    const store = new HostStore(dir);
    const handle = new StateHandle(store, emptyHostState());
    await handle.stage((state) => ({ ...state, sequence: 5 }));
    expect(handle.current().sequence).toBe(5);
    expect((await store.load()).source).toBe('fresh');
    await handle.update((state) => ({ ...state, report_sequence: 2 }));
    const saved = (await store.load()).state;
    expect([saved.sequence, saved.report_sequence]).toEqual([5, 2]);
  });

  test('flush writes a staged change no update wrote, and nothing when there is none', async () => {
    const store = new HostStore(dir);
    const handle = new StateHandle(store, emptyHostState());
    await handle.flush();
    expect((await store.load()).source).toBe('fresh');
    await handle.stage((state) => ({ ...state, sequence: 3 }));
    await handle.flush();
    expect((await store.load()).state.sequence).toBe(3);
  });
});
