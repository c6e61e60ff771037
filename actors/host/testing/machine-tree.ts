import { promises as fs } from 'node:fs';
import path from 'node:path';

/** What a machine's root holds, as the host declares paths: absolute from the root. */
export interface MachineTree {
  files: Map<string, string>;
  dirs: Set<string>;
  /** Each file's and directory's permission bits, four octal digits. */
  modes: Map<string, string>;
}

/**
 * Every regular file (with its text) and directory under `root`, outside the host's state
 * directory (`stateDir`, as declared from the root): what a kill -9 test compares with what was
 * declared, since the state directory is the host's own and changes on every pass.
 */
export async function machineTree(root: string, stateDir = '/var/lib/mesh-host'): Promise<MachineTree> {
  const found: MachineTree = { files: new Map(), dirs: new Set(), modes: new Map() };
  async function walk(dir: string): Promise<void> {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const declared = `/${path.relative(root, full)}`;
      if (declared === stateDir || declared.startsWith(`${stateDir}/`)) continue;
      found.modes.set(declared, ((await fs.lstat(full)).mode & 0o7777).toString(8).padStart(4, '0'));
      if (entry.isDirectory()) {
        found.dirs.add(declared);
        await walk(full);
      } else {
        found.files.set(declared, await fs.readFile(full, 'utf8'));
      }
    }
  }
  await walk(root);
  return found;
}
