import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimPidfile, HostAlreadyRunning } from './pidfile';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pidfile-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

describe('the host pidfile', () => {
  test('names this process while it runs, and is gone once released', async () => {
    const pidfile = await claimPidfile(dir);
    expect(await fs.readFile(path.join(dir, 'host.pid'), 'utf8')).toBe(`${process.pid}\n`);
    await pidfile.release();
    await expect(fs.stat(path.join(dir, 'host.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('refuses a second host while the first is alive, naming its process', async () => {
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await fs.writeFile(path.join(dir, 'host.pid'), `${other.pid}\n`);
      const error = await claimPidfile(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HostAlreadyRunning);
      expect((error as Error).message).toContain(`process ${other.pid}`);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
  });

  test('takes over a pidfile left by a process that is gone', async () => {
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(gone, 'exit');
    await fs.writeFile(path.join(dir, 'host.pid'), `${gone.pid}\n`);
    const pidfile = await claimPidfile(dir);
    expect(await fs.readFile(path.join(dir, 'host.pid'), 'utf8')).toBe(`${process.pid}\n`);
    await pidfile.release();
  });

  test('release leaves alone a pidfile another process has since claimed', async () => {
    const pidfile = await claimPidfile(dir);
    await fs.writeFile(path.join(dir, 'host.pid'), '1\n');
    await pidfile.release();
    expect(await fs.readFile(path.join(dir, 'host.pid'), 'utf8')).toBe('1\n');
  });
});
