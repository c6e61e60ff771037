import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How {@link makePacmanRoot} sets the root up. */
export interface PacmanRootOptions {
  /** A local repository directory pacman.conf names, as `[name]` with `Server = file://path`. */
  repository?: { name: string; path: string };
  /** More lines for pacman.conf's `[options]` (`CacheDir = …`, `LocalFileSigLevel = …`), after `SigLevel = Never`. */
  settings?: string[];
}

/**
 * Makes `root` look like an Arch machine to pacman: an empty local database and a pacman.conf,
 * optionally naming a local repository directory — the file a `file` resource would write on a
 * real node to point it at the mesh's repository. Signatures are not checked unless `settings`
 * say otherwise: the repository is a directory the test made.
 */
export async function makePacmanRoot(root: string, options: PacmanRootOptions = {}): Promise<void> {
  await mkdir(join(root, 'var/lib/pacman/local'), { recursive: true });
  await mkdir(join(root, 'etc'), { recursive: true });
  const lines = ['[options]', 'Architecture = auto', 'SigLevel = Never', ...(options.settings ?? []), ''];
  if (options.repository !== undefined) lines.push(`[${options.repository.name}]`, `Server = file://${options.repository.path}`, '');
  await writeFile(join(root, 'etc/pacman.conf'), lines.join('\n'));
}
