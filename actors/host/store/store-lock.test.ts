import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lockStore, LOCK_FILE } from './store-lock';
import { StoreLocked } from './store-errors';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'store-lock-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

describe('the store lock', () => {
  test('a second process is refused while a live one holds the store', async () => {
    const holder = spawn('sleep', ['30']);
    try {
      await lockStore(dir, holder.pid!);
      await expect(lockStore(dir)).rejects.toBeInstanceOf(StoreLocked);
      await expect(lockStore(dir)).rejects.toThrow(`in use by process ${holder.pid}`);
    } finally {
      holder.kill();
    }
  });

  test('a lock left by a process that is gone is taken over', async () => {
    await fs.writeFile(path.join(dir, LOCK_FILE), '999999999\n');
    const release = await lockStore(dir);
    expect(await fs.readFile(path.join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    await release();
    await expect(fs.stat(path.join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
