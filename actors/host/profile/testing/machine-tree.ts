import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * What to put under a test machine's root, by path relative to it: text for a file, `null`
 * for a directory, or `{ text, mode }` for a file with a mode (an executable).
 */
export type MachineTree = Record<string, string | null | { text: string; mode: number }>;

/** Writes `tree` under `root`, creating directories on the way. */
export async function writeTree(root: string, tree: MachineTree): Promise<void> {
  for (const [path, entry] of Object.entries(tree)) {
    const target = join(root, path);
    if (entry === null) {
      await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    if (typeof entry === 'string') {
      await writeFile(target, entry);
    } else {
      await writeFile(target, entry.text);
      await chmod(target, entry.mode);
    }
  }
}

/**
 * Temporary machine roots for one test file: `make(tree)` returns a fresh root holding `tree`;
 * `cleanup()` (in afterAll) removes them all.
 */
export function machineRoots(prefix: string): { make(tree?: MachineTree): Promise<string>; cleanup(): Promise<void> } {
  const made: string[] = [];
  return {
    async make(tree: MachineTree = {}): Promise<string> {
      const root = await mkdtemp(join(tmpdir(), `${prefix}-`));
      made.push(root);
      await writeTree(root, tree);
      return root;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.map((root) => rm(root, { recursive: true, force: true })));
    },
  };
}
