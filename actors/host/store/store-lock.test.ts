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

describe('taking over a stale lock', () => {
  const repo = path.resolve(__dirname, '..', '..', '..');

  /** Starts `count` processes that all try to take the lock at the same instant; resolves with what each said. */
  async function contenders(count: number, round: number): Promise<{ said: string[]; stop: () => Promise<void> }> {
    const goFile = path.join(os.tmpdir(), `lock-go-${process.pid}-${round}-${Date.now()}`);
    const children = Array.from({ length: count }, () =>
      spawn(process.execPath, [path.join(repo, 'scripts/run-ts.cjs'), path.join(__dirname, 'testing/lock-contender.ts'), dir, goFile], { cwd: repo }));
    const lines = children.map((child) => {
      let out = '';
      const waiters: Array<() => void> = [];
      child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); waiters.forEach((wake) => wake()); });
      child.once('exit', () => { out += '\nexited\n'; waiters.forEach((wake) => wake()); });
      /** The `index`th line it said, once it has said it. */
      return (index: number) => new Promise<string>((resolve) => {
        const check = () => { const said = out.split('\n'); if (said.length > index + 1) resolve(said[index] as string); };
        waiters.push(check);
        check();
      });
    });
    expect(await Promise.all(lines.map((line) => line(0)))).toEqual(Array(count).fill('ready'));
    await fs.writeFile(goFile, '');
    const said = await Promise.all(lines.map((line) => line(1)));
    await fs.rm(goFile, { force: true });
    const exited = children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined))));
    return { said, stop: async () => { children.forEach((child) => child.stdin.end()); await Promise.all(exited); } };
  }

  test('of many processes taking over the same stale lock at once, exactly one holds it', async () => {
    for (let round = 0; round < 3; round += 1) {
      await fs.writeFile(path.join(dir, LOCK_FILE), '999999999\n');
      const { said, stop } = await contenders(6, round);
      try {
        expect(said.filter((line) => line === 'held')).toHaveLength(1);
        expect(said.filter((line) => line !== 'held')).toEqual(Array(5).fill('refused StoreLocked'));
      } finally {
        await stop();
      }
      await fs.rm(path.join(dir, LOCK_FILE), { force: true });
    }
  }, 180_000);

  test('leaves no claim of its own behind, and sweeps those of processes that are gone', async () => {
    await fs.writeFile(path.join(dir, `${LOCK_FILE}.999999999.abc123`), '999999999\n');
    await fs.writeFile(path.join(dir, `${LOCK_FILE}.stale.999999999.def456`), '999999998\n');
    const release = await lockStore(dir);
    expect(await fs.readdir(dir)).toEqual([LOCK_FILE]);
    await release();
  });
});
