import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Makes `root` look like a Debian machine to dpkg and apt: an empty dpkg database, and
 * optionally an apt source naming a local flat repository — the file a `file` resource would
 * write on a real node to point it at the mesh's repository.
 */
export async function makeDpkgRoot(root: string, options: { aptRepository?: string } = {}): Promise<void> {
  const admindir = join(root, 'var/lib/dpkg');
  await mkdir(join(admindir, 'info'), { recursive: true });
  await mkdir(join(admindir, 'updates'), { recursive: true });
  await writeFile(join(admindir, 'status'), '');
  await writeFile(join(admindir, 'available'), '');
  if (options.aptRepository !== undefined) {
    await mkdir(join(root, 'etc/apt/sources.list.d'), { recursive: true });
    await writeFile(join(root, 'etc/apt/sources.list.d/mesh.list'), `deb [trusted=yes] file:${options.aptRepository} ./\n`);
  }
}
