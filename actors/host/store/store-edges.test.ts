import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The store's edges as a person meets them: the real nox-mesh-host over a temporary root.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');

let root: string;
let stateDir: string;
let declaration: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'store-edges-'));
  stateDir = path.join(root, 'var/lib/mesh-host');
  declaration = path.join(root, 'declaration.json');
  await fs.writeFile(declaration, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'declared\n' } }] }));
});
afterEach(async () => { await fs.rm(root, { recursive: true, force: true }); });

function host(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [bin, ...args, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

describe('the store, for a person at the machine', () => {
  test('a host whose store was deleted after it adopted a file refuses (exit 4) rather than adopting its own work, and changes nothing', async () => {
    await fs.mkdir(path.join(root, 'etc'));
    await fs.writeFile(path.join(root, 'etc/motd'), 'the machine\'s own\n');
    expect(host('apply', declaration).status).toBe(0);
    await fs.rm(path.join(stateDir, 'state.json'));
    await fs.rm(path.join(stateDir, 'state.last-good.json'));
    const again = host('apply', declaration);
    expect(again.status).toBe(4);
    expect(again.stderr).toMatch(/store is missing .*originals holds originals.*\nnext: +restore state\.json from a backup/s);
    expect(again.stderr).not.toMatch(/\n +at /);
    expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('the machine\'s own\n');
    await expect(fs.stat(path.join(stateDir, 'state.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a state.json that is a directory is recovered from the last-good copy, said once on stderr, and the pass goes on', async () => {
    expect(host('apply', declaration).status).toBe(0);
    await fs.rm(path.join(stateDir, 'state.json'));
    await fs.mkdir(path.join(stateDir, 'state.json'));
    const run = host('reconcile');
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.stringMatching(/^warning: .*state\.json is unreadable: EISDIR.*recovered from .*state\.last-good\.json/) });
    expect(run.stdout).toMatch(/unchanged/);
    expect((await fs.stat(path.join(stateDir, 'state.json'))).isFile()).toBe(true);
  });

  test('`owned` with a damaged state.json reads the copy and writes nothing, since it does not hold the lock', async () => {
    expect(host('apply', declaration).status).toBe(0);
    await fs.writeFile(path.join(stateDir, 'state.json'), '{"format": 1, "ident');
    const before = (await fs.readdir(stateDir)).sort();
    const run = host('owned');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('file:/etc/motd');
    expect(run.stderr).toMatch(/^warning: .*recovered from/);
    expect(await fs.readFile(path.join(stateDir, 'state.json'), 'utf8')).toBe('{"format": 1, "ident');
    expect((await fs.readdir(stateDir)).sort()).toEqual(before);
  });

  test('a content over the bound is refused whole, naming the bound, and nothing is written', async () => {
    const big = path.join(root, 'big.json');
    await fs.writeFile(big, JSON.stringify({ resources: [
      { shape: 'file', path: '/etc/small', content: { text: 'small\n' } },
      { shape: 'file', path: '/srv/big', content: { text: 'x'.repeat(8 * 1024 * 1024 + 1) } },
    ] }));
    const run = host('apply', big);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/resources\[1\]\.content.*8,388,609 bytes, over the 8 MiB a file resource may hold/s);
    await expect(fs.stat(path.join(root, 'etc/small'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(path.join(stateDir, 'state.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a declaration file over the bound is refused before it is read', async () => {
    const huge = path.join(root, 'huge.json');
    const handle = await fs.open(huge, 'w');
    await handle.truncate(32 * 1024 * 1024 + 1);
    await handle.close();
    const run = host('apply', huge);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/33,554,433 bytes, over the 32 MiB a declaration may be/);
    await expect(fs.stat(path.join(stateDir, 'state.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
