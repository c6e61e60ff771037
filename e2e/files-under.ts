import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * Every file (not directory) under `root`, as root-relative paths in sorted order, leaving out
 * the directories named in `except` (root-relative): what a machine holds, less the host's own
 * state.
 */
export async function filesUnder(root: string, except: readonly string[] = []): Promise<string[]> {
  const skipped = new Set(except.map((dir) => path.normalize(dir)));
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await fs.readdir(path.join(root, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) {
        if (!skipped.has(child)) await walk(child);
      } else {
        found.push(child);
      }
    }
  };
  await walk('');
  return found.sort();
}
