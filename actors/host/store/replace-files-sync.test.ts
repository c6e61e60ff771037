import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { replaceFilesSync } from './replace-files-sync';

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'replace-files-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

describe('replacing files atomically', () => {
  test('replaces every file with its new bytes, leaving no temporary files', async () => {
    await fs.writeFile(path.join(dir, 'a.json'), 'old a');
    replaceFilesSync(dir, [{ name: 'a.json', data: 'new a' }, { name: 'b.json', data: new TextEncoder().encode('new b') }]);
    expect(await fs.readFile(path.join(dir, 'a.json'), 'utf8')).toBe('new a');
    expect(await fs.readFile(path.join(dir, 'b.json'), 'utf8')).toBe('new b');
    expect((await fs.readdir(dir)).sort()).toEqual(['a.json', 'b.json']);
  });

  test('gives the files exactly the mode asked, whatever the umask', async () => {
    const umask = process.umask(0o077);
    try {
      replaceFilesSync(dir, [{ name: 'known-good', data: '1.0\n' }], 0o644);
    } finally {
      process.umask(umask);
    }
    expect((await fs.stat(path.join(dir, 'known-good'))).mode & 0o777).toBe(0o644);
  });

  test('a failure before the renames leaves every file as it was and no temporary behind', async () => {
    await fs.writeFile(path.join(dir, 'a.json'), 'old a');
    // The second file's directory does not exist, so its temporary cannot be made.
    expect(() => replaceFilesSync(dir, [{ name: 'a.json', data: 'new a' }, { name: 'missing/b.json', data: 'new b' }])).toThrow(/ENOENT/);
    expect(await fs.readFile(path.join(dir, 'a.json'), 'utf8')).toBe('old a');
    expect(await fs.readdir(dir)).toEqual(['a.json']);
  });
});
