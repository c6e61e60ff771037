import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCachedPackage, pacmanCacheDirectories } from './pacman-cache';

// The file names and pacman.conf lines here are made by hand; pacman.backend.test.ts installs
// real cached packages with real pacman.

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'pacman-cache-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writePacmanConf(text: string): Promise<void> {
  await mkdir(join(root, 'etc'), { recursive: true });
  await writeFile(join(root, 'etc/pacman.conf'), text);
}

/** Empty files by name in `directory` under the root. */
async function files(directory: string, names: string[]): Promise<string> {
  const path = join(root, directory);
  await mkdir(path, { recursive: true });
  for (const name of names) await writeFile(join(path, name), '');
  return path;
}

describe('pacmanCacheDirectories', () => {
  test('a root without pacman.conf has the default cache alone, under the root', async () => {
    expect(await pacmanCacheDirectories(root)).toEqual([join(root, 'var/cache/pacman/pkg')]);
  });

  test('takes every CacheDir of [options] in order, several to a line, ignoring comments and other sections, then the default once', async () => {
    await writePacmanConf(
      [
        '# CacheDir = /commented/out/',
        '[options]',
        'CacheDir = /srv/a/   /srv/b/ # and a comment',
        'HoldPkg = pacman glibc',
        'CacheDir=/var/cache/pacman/pkg/',
        '[core]',
        'CacheDir = /not/an/option/here/',
        'Server = file:///srv/core',
        '',
      ].join('\n'),
    );

    expect(await pacmanCacheDirectories(root)).toEqual([join(root, 'srv/a'), join(root, 'srv/b'), join(root, 'var/cache/pacman/pkg')]);
  });

  test('a CacheDir climbing out with ".." stays under the root', async () => {
    await writePacmanConf('[options]\nCacheDir = /../../etc/\n');

    expect((await pacmanCacheDirectories(root))[0]).toBe(join(root, 'etc'));
  });
});

describe('findCachedPackage', () => {
  test('finds the file of exactly that name and full version, whatever its architecture and compression', async () => {
    const cache = await files('cache', ['demo-1.0-1-x86_64.pkg.tar.xz', 'demo-1.0-2-any.pkg.tar.zst', 'demo-1.0-11-any.pkg.tar.zst']);

    expect(await findCachedPackage('demo', '1.0-1', [cache])).toBe(join(cache, 'demo-1.0-1-x86_64.pkg.tar.xz'));
    expect(await findCachedPackage('demo', '1.0', [cache])).toBeUndefined();
  });

  test('keeps the epoch\'s colon and does not confuse a version with an epoch with one without', async () => {
    const cache = await files('cache', ['demo-2.0-1-any.pkg.tar.zst', 'demo-1:2.0-1-any.pkg.tar']);

    expect(await findCachedPackage('demo', '1:2.0-1', [cache])).toBe(join(cache, 'demo-1:2.0-1-any.pkg.tar'));
    expect(await findCachedPackage('demo', '2.0-1', [cache])).toBe(join(cache, 'demo-2.0-1-any.pkg.tar.zst'));
  });

  test('does not take a longer name, a signature, a partial download or another compression for the package', async () => {
    const cache = await files('cache', [
      'demo-extra-1.0-1-any.pkg.tar.zst',
      'demo-1.0-1-any.pkg.tar.zst.sig',
      'demo-1.0-1-any.pkg.tar.zst.part',
      'demo-1.0-1-any.pkg.tar.bz2',
      'demo-1.0-1-any.tar.zst',
    ]);

    expect(await findCachedPackage('demo', '1.0-1', [cache])).toBeUndefined();
    expect(await findCachedPackage('demo-extra', '1.0-1', [cache])).toBe(join(cache, 'demo-extra-1.0-1-any.pkg.tar.zst'));
  });

  test('searches the directories in order, skipping missing ones, a directory named like a package, and follows links', async () => {
    const missing = join(root, 'missing');
    const first = await files('first', []);
    await mkdir(join(first, 'demo-1.0-1-any.pkg.tar.zst'));
    const second = await files('second', ['demo-1.0-1-any.pkg.tar.gz']);
    await symlink(join(second, 'demo-1.0-1-any.pkg.tar.gz'), join(first, 'demo-1.0-1-any.pkg.tar.xz'));

    expect(await findCachedPackage('demo', '1.0-1', [missing, first, second])).toBe(join(first, 'demo-1.0-1-any.pkg.tar.xz'));
    expect(await findCachedPackage('demo', '1.0-1', [missing, second, first])).toBe(join(second, 'demo-1.0-1-any.pkg.tar.gz'));
  });
});
