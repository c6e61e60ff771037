import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DirectorySyncBarrier } from './directory-sync-barrier';

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sync-barrier-'));
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('DirectorySyncBarrier', () => {
  test('notes each changed directory once and owes nothing after a flush', async () => {
    const barrier = new DirectorySyncBarrier();
    barrier.changed(dir);
    barrier.changed(dir);
    barrier.changed(path.join(dir));
    expect(barrier.pending).toBe(1);
    await barrier.flush();
    expect(barrier.pending).toBe(0);
  });

  test('treats a directory removed since it changed as nothing left to sync', async () => {
    const barrier = new DirectorySyncBarrier();
    const gone = path.join(dir, 'gone');
    await fs.mkdir(gone);
    barrier.changed(gone);
    await fs.rmdir(gone);
    await expect(barrier.flush()).resolves.toBeUndefined();
    expect(barrier.pending).toBe(0);
  });

  test('keeps every directory owed when one cannot be synced, so the caller records nothing yet', async () => {
    const barrier = new DirectorySyncBarrier();
    const notADirectory = path.join(dir, 'file');
    await fs.writeFile(notADirectory, 'x');
    barrier.changed(dir);
    barrier.changed(notADirectory);
    await expect(barrier.flush()).rejects.toThrow(/ENOTDIR/);
    expect(barrier.pending).toBe(2);
    await fs.rm(notADirectory);
    await fs.mkdir(notADirectory);
    await barrier.flush();
    expect(barrier.pending).toBe(0);
  });
});
