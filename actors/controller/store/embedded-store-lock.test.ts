import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lockEmbeddedStore } from './embedded-store-lock';
import { StoreInUse } from './store-errors';

let dir: string;
let dataDir: string;
let lockFile: string;
let bootId: string;
beforeAll(async () => { bootId = (await fs.readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim(); });
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'store-lock-'));
  dataDir = path.join(dir, 'store');
  lockFile = `${dataDir}.lock`;
});
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

test('takes the directory, writes its pid beside it, and gives it back', async () => {
  const release = await lockEmbeddedStore(dataDir);
  expect(await fs.readFile(lockFile, 'utf8')).toBe(`${process.pid} ${bootId}\n`);
  await release();
  await expect(fs.access(lockFile)).rejects.toMatchObject({ code: 'ENOENT' });
  await (await lockEmbeddedStore(dataDir))();
});

test('refuses a second holder in the same process', async () => {
  const release = await lockEmbeddedStore(dataDir);
  await expect(lockEmbeddedStore(dataDir)).rejects.toThrow(StoreInUse);
  await release();
});

test('refuses while a live process holds it, naming its pid and the lock file', async () => {
  await fs.writeFile(lockFile, `${process.ppid} ${bootId}\n`);
  const refusal = lockEmbeddedStore(dataDir);
  await expect(refusal).rejects.toThrow(StoreInUse);
  await expect(refusal).rejects.toThrow(`pid ${process.ppid}`);
  await expect(refusal).rejects.toMatchObject({ next: expect.stringContaining(lockFile) });
});

test('takes over a lock whose process has exited', async () => {
  await fs.writeFile(lockFile, `${await exitedPid()} ${bootId}\n`);
  const release = await lockEmbeddedStore(dataDir);
  expect(await fs.readFile(lockFile, 'utf8')).toBe(`${process.pid} ${bootId}\n`);
  await release();
});

test('takes over a lock written before the machine restarted, even if its pid is alive now', async () => {
  await fs.writeFile(lockFile, `${process.ppid} 00000000-0000-0000-0000-000000000000\n`);
  await (await lockEmbeddedStore(dataDir))();
});

test('takes over a lock left by an earlier run of this same pid', async () => {
  await fs.writeFile(lockFile, `${process.pid} ${bootId}\n`);
  await (await lockEmbeddedStore(dataDir))();
});

async function exitedPid(): Promise<number> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}
