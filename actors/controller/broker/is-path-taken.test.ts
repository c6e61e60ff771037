import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPathTaken } from './is-path-taken';

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'is-path-taken-'));
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('isPathTaken', () => {
  test('is false for a path with nothing at it, and true for a file or a directory', async () => {
    await fs.writeFile(path.join(dir, 'file'), '');
    await fs.mkdir(path.join(dir, 'directory'));

    expect(await isPathTaken(path.join(dir, 'absent'))).toBe(false);
    expect(await isPathTaken(path.join(dir, 'file'))).toBe(true);
    expect(await isPathTaken(path.join(dir, 'directory'))).toBe(true);
  });

  test('takes a link to nowhere as taken, so nothing is written through it', async () => {
    await fs.symlink(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));

    expect(await isPathTaken(path.join(dir, 'dangling'))).toBe(true);
  });

  test('throws when the path cannot be looked at, rather than calling it free', async () => {
    await fs.writeFile(path.join(dir, 'file'), '');

    await expect(isPathTaken(path.join(dir, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
