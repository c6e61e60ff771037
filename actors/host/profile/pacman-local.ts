import { join } from 'node:path';
import { readdir, readFile } from '../../shared/fs/promised-fs';

/**
 * Reads one `desc` file of pacman's local database: sections headed `%NAME%`, `%VERSION%`, …,
 * each followed by its value lines and a blank line. Returns name and version, or undefined
 * when either is missing.
 */
export function parsePacmanDesc(text: string): { name: string; version: string } | undefined {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const header = /^%([A-Z0-9_]+)%$/.exec(line.trim());
    if (header !== null) {
      current = [];
      sections.set(header[1] as string, current);
    } else if (line.trim() === '') {
      current = undefined;
    } else {
      current?.push(line.trim());
    }
  }
  const name = sections.get('NAME')?.[0];
  const version = sections.get('VERSION')?.[0];
  return name === undefined || version === undefined ? undefined : { name, version };
}

/** What {@link readPacmanLocal} found: the packages, and the entries it could not read. */
export interface PacmanLocalRead {
  packages: Array<{ name: string; version: string }>;
  unreadable: string[];
}

// Reading a thousand small files all at once would hold a thousand descriptors open.
const BATCH = 64;

/**
 * Reads pacman's local database directory (`var/lib/pacman/local`): one directory per
 * installed package (`name-version-release`) holding a `desc`. The `ALPM_DB_VERSION` file
 * beside them is not a package. Throws only when the directory itself cannot be read.
 */
export async function readPacmanLocal(directory: string): Promise<PacmanLocalRead> {
  const entries = (await readdir(directory, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const packages: PacmanLocalRead['packages'] = [];
  const unreadable: string[] = [];
  for (let start = 0; start < entries.length; start += BATCH) {
    const batch = entries.slice(start, start + BATCH);
    const texts = await Promise.all(batch.map((entry) => readFile(join(directory, entry, 'desc'), 'utf8').catch(() => undefined)));
    texts.forEach((text, index) => {
      const parsed = text === undefined ? undefined : parsePacmanDesc(text);
      if (parsed === undefined) unreadable.push(batch[index] as string);
      else packages.push(parsed);
    });
  }
  return { packages, unreadable };
}
