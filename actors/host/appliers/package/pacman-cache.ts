import { join, posix } from 'node:path';
import { readdir, readFile, stat } from '../../../shared/fs/promised-fs';

// pacman keeps every package it downloaded in its cache, and an Arch operator downgrades by
// installing the old file from there (`pacman -U /var/cache/pacman/pkg/name-version-arch.pkg.tar.zst`).
// This finds that file for the host the same way.

/** Where pacman caches packages when pacman.conf names no CacheDir, and where it downloads to under a root. */
export const DEFAULT_PACMAN_CACHE = '/var/cache/pacman/pkg/';

// What follows `<name>-<version>-` in a cached package's file name: the architecture (never a
// "-") and the package extension. `.sig` and half-downloaded `.part` files end otherwise.
const ARCH_AND_EXTENSION = /^[A-Za-z0-9_]+\.pkg\.tar(?:\.(?:zst|xz|gz))?$/;

/**
 * The package cache directories of the machine at `root`, as paths on this machine: the
 * `CacheDir` entries of `<root>/etc/pacman.conf`'s `[options]` (pacman allows several, on
 * several lines or space-separated on one), each resolved under the root, then the default
 * directory. The default is searched even when pacman.conf names others, because under a root
 * the host points pacman's downloads there, and because a file in it is as much the machine's
 * own as one in a configured directory. A missing pacman.conf means the default alone.
 */
export async function pacmanCacheDirectories(root: string): Promise<string[]> {
  let conf: string;
  try {
    conf = await readFile(join(root, 'etc/pacman.conf'), 'utf8');
  } catch (error) {
    if (!isMissing(error)) throw error;
    conf = '';
  }
  const configured = cacheDirsIn(conf);
  const directories = [...configured, DEFAULT_PACMAN_CACHE].map((directory) => join(root, posix.resolve('/', directory)));
  return [...new Set(directories)];
}

/**
 * The cached package file of exactly `name` at exactly `version` (pkgver-pkgrel, with the epoch
 * if the version has one: pacman's file names keep the colon), searching `directories` in
 * order, or undefined. A file is `<name>-<version>-<arch>.pkg.tar[.zst|.xz|.gz]`; because an
 * architecture never contains "-", `name-extra-1-1-any…` is not taken for `name`, and neither
 * is a detached signature (`….sig`) lying beside the package. Where one directory holds several
 * matches (two compressions, two architectures) the first by name is taken; pacman refuses a
 * package of another architecture in words of its own.
 *
 * The name is trusted to say what the file holds: the host reads the package database back
 * after installing, so a file that installs something else fails there.
 */
export async function findCachedPackage(name: string, version: string, directories: readonly string[]): Promise<string | undefined> {
  const prefix = `${name}-${version}-`;
  for (const directory of directories) {
    let entries: string[];
    try {
      entries = await readdir(directory);
    } catch (error) {
      if (isMissing(error)) continue;
      throw error;
    }
    const candidates = entries.filter((entry) => entry.startsWith(prefix) && ARCH_AND_EXTENSION.test(entry.slice(prefix.length))).sort();
    for (const candidate of candidates) {
      const path = join(directory, candidate);
      // Following a link, as pacman would; a directory of that name is not a package.
      if (await isFile(path)) return path;
    }
  }
  return undefined;
}

/** The CacheDir values of pacman.conf's [options] section, in order. */
function cacheDirsIn(conf: string): string[] {
  const found: string[] = [];
  let section = '';
  for (const raw of conf.split('\n')) {
    // pacman drops everything from a "#" on, not only whole comment lines.
    const line = raw.replace(/#.*$/, '').trim();
    const header = /^\[(.*)\]$/.exec(line);
    if (header !== null) {
      section = header[1] ?? '';
      continue;
    }
    if (section !== 'options') continue;
    const option = /^CacheDir\s*=\s*(.*)$/.exec(line);
    if (option !== null) found.push(...(option[1] ?? '').split(/\s+/).filter((value) => value !== ''));
  }
  return found;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
