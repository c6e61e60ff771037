import { spawnSync } from 'node:child_process';
import { constants, promises as nodeFs, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as fs from './promised-fs';

let dir: string;

beforeEach(async () => {
  dir = await nodeFs.mkdtemp(path.join(os.tmpdir(), 'promised-fs-'));
});

afterEach(async () => {
  await nodeFs.rm(dir, { recursive: true, force: true });
});

/** What a rejection carried, for comparing with what `fs/promises` rejects with. */
async function failure(promise: Promise<unknown>): Promise<{ code?: string; syscall?: string; path?: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, syscall, path: where } = error as NodeJS.ErrnoException;
    return { code, syscall, path: where };
  }
  throw new Error('expected the call to fail, and it succeeded');
}

describe('promised-fs', () => {
  test('rejects as fs/promises does: the same code, system call and path', async () => {
    const missing = path.join(dir, 'missing');
    expect(await failure(fs.readFile(missing, 'utf8'))).toEqual(await failure(nodeFs.readFile(missing, 'utf8')));
    expect(await failure(fs.stat(missing))).toEqual(await failure(nodeFs.stat(missing)));
    expect(await failure(fs.access(missing))).toEqual(await failure(nodeFs.access(missing)));
    expect(await failure(fs.open(missing, 'r'))).toEqual({ code: 'ENOENT', syscall: 'open', path: missing });
  });

  test('writes and reads a file whole, as text and as bytes', async () => {
    const file = path.join(dir, 'a');
    const text = 'é'.repeat(300_000);
    await fs.writeFile(file, text);
    expect(await fs.readFile(file, 'utf8')).toBe(text);
    expect(Buffer.compare(await fs.readFile(file), Buffer.from(text))).toBe(0);
    await fs.writeFile(file, 'more', { flag: 'a' });
    expect(readFileSync(file, 'utf8')).toBe(`${text}more`);
  });

  test('makes directories, lists them, and removes trees and missing paths alike', async () => {
    const deep = path.join(dir, 'x', 'y', 'z');
    expect(await fs.mkdir(deep, { recursive: true, mode: 0o700 })).toBe(path.join(dir, 'x'));
    expect(statSync(deep).mode & 0o777).toBe(0o700 & ~process.umask());
    await fs.writeFile(path.join(dir, 'x', 'f'), '');
    expect((await fs.readdir(path.join(dir, 'x'))).sort()).toEqual(['f', 'y']);
    const entries = await fs.readdir(path.join(dir, 'x'), { withFileTypes: true });
    expect(entries.map((entry) => [entry.name, entry.isDirectory()]).sort()).toEqual([['f', false], ['y', true]]);
    await fs.rm(path.join(dir, 'x'), { recursive: true });
    await fs.rm(path.join(dir, 'x'), { force: true });
    expect((await failure(fs.rm(path.join(dir, 'x')))).code).toBe('ENOENT');
  });

  test('renames, copies and links, refusing a link over a name that is taken', async () => {
    const a = path.join(dir, 'a');
    await fs.writeFile(a, 'one');
    await fs.copyFile(a, path.join(dir, 'copy'));
    await fs.rename(a, path.join(dir, 'b'));
    await fs.link(path.join(dir, 'b'), path.join(dir, 'linked'));
    expect((await failure(fs.link(path.join(dir, 'b'), path.join(dir, 'copy')))).code).toBe('EEXIST');
    expect((await fs.readdir(dir)).sort()).toEqual(['b', 'copy', 'linked']);
    expect((await fs.stat(path.join(dir, 'linked'))).nlink).toBe(2);
  });

  test('stat follows a symbolic link and lstat does not', async () => {
    await fs.mkdir(path.join(dir, 'target'));
    await nodeFs.symlink('target', path.join(dir, 'link'));
    expect((await fs.stat(path.join(dir, 'link'))).isDirectory()).toBe(true);
    expect((await fs.lstat(path.join(dir, 'link'))).isSymbolicLink()).toBe(true);
  });
});

describe('OpenFile', () => {
  test('an exclusive create refuses a file that exists', async () => {
    await fs.writeFile(path.join(dir, 'lock'), '1\n');
    expect((await failure(fs.open(path.join(dir, 'lock'), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600))).code).toBe('EEXIST');
  });

  test('writes all of a large buffer, sets the exact mode despite the umask, and syncs', async () => {
    const file = path.join(dir, 'big');
    const data = Buffer.alloc(8 * 1024 * 1024, 7);
    const handle = await fs.open(file, 'wx', 0o666);
    try {
      await handle.writeFile(data);
      await handle.chmod(0o640);
      await handle.sync();
      const stats = await handle.stat();
      expect(stats.size).toBe(data.length);
      expect(stats.mode & 0o777).toBe(0o640);
    } finally {
      await handle.close();
    }
    expect(Buffer.compare(readFileSync(file), data)).toBe(0);
  });

  test('stat describes the file opened, not what has since been renamed over its path', async () => {
    const file = path.join(dir, 'f');
    await fs.writeFile(file, 'old');
    const handle = await fs.open(file, 'r');
    try {
      await fs.writeFile(path.join(dir, 'new'), 'newer content');
      await fs.rename(path.join(dir, 'new'), file);
      expect((await handle.stat()).size).toBe(3);
      expect(await handle.readFile('utf8')).toBe('old');
    } finally {
      await handle.close();
    }
  });

  test('reads at a position, and the rest of the file from the offset', async () => {
    const file = path.join(dir, 'f');
    await fs.writeFile(file, '0123456789');
    const handle = await fs.open(file, 'r');
    try {
      const head = Buffer.alloc(4);
      expect(await handle.read(head, 6)).toBe(4);
      expect(head.toString()).toBe('6789');
      const past = Buffer.alloc(4);
      expect(await handle.read(past, 100)).toBe(0);
      expect(await handle.read(head)).toBe(4);
      expect(head.toString()).toBe('0123');
      expect(await handle.readFile('utf8')).toBe('456789');
    } finally {
      await handle.close();
    }
  });

  test('syncs a directory opened read-only', async () => {
    const handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
      expect((await handle.stat()).isDirectory()).toBe(true);
    } finally {
      await handle.close();
    }
  });

  test('a second close closes nothing, so a descriptor number handed on is not taken from its new file', async () => {
    const first = await fs.open(path.join(dir, 'a'), 'w');
    await first.close();
    await fs.writeFile(path.join(dir, 'b'), 'kept open');
    const second = await fs.open(path.join(dir, 'b'), 'r');
    try {
      // The kernel hands out the lowest free number, so the second file has the first's.
      expect(second.fd).toBe(first.fd);
      await first.close();
      expect(await second.readFile('utf8')).toBe('kept open');
    } finally {
      await second.close();
    }
  });
});

test('loading it loads neither fs/promises nor readline', () => {
  const run = spawnSync(process.execPath, ['-r', path.join(__dirname, '..', '..', '..', 'scripts', 'register.cjs'), '-e', `
    require(${JSON.stringify(path.join(__dirname, 'promised-fs.ts'))});
    const loaded = process.moduleLoadList.filter((name) => /fs\\/promises|readline/.test(name));
    process.stdout.write(JSON.stringify(loaded));
  `], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual([]);
});
