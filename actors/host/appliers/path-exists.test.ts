import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathExists } from './path-exists';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'path-exists-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pathExists', () => {
  test('is true for a file, a directory and a link to one, and false for a path with nothing at it', async () => {
    await writeFile(join(dir, 'file'), '');
    await mkdir(join(dir, 'directory'));
    await symlink(join(dir, 'file'), join(dir, 'link'));

    expect(await pathExists(join(dir, 'file'))).toBe(true);
    expect(await pathExists(join(dir, 'directory'))).toBe(true);
    expect(await pathExists(join(dir, 'link'))).toBe(true);
    expect(await pathExists(join(dir, 'absent'))).toBe(false);
  });

  test('follows a link, so one that points nowhere is not there', async () => {
    await symlink(join(dir, 'nowhere'), join(dir, 'dangling'));

    expect(await pathExists(join(dir, 'dangling'))).toBe(false);
  });

  test('reads a path it cannot look at as not there, rather than failing', async () => {
    await writeFile(join(dir, 'file'), '');

    expect(await pathExists(join(dir, 'file', 'below'))).toBe(false);
  });
});
