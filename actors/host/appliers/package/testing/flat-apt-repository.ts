import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { runTool } from './run-tool';

/**
 * Writes the `Packages` index of a flat apt repository (`deb [trusted=yes] file:DIR ./`) for
 * every `.deb` in `directory`, as `dpkg-scanpackages` would: each package's control fields,
 * then where the file is and its size and SHA-256. Run it again after adding a package.
 */
export async function writeFlatAptIndex(directory: string): Promise<void> {
  const debs = (await readdir(directory)).filter((file) => file.endsWith('.deb')).sort();
  const stanzas: string[] = [];
  for (const deb of debs) {
    const path = join(directory, deb);
    const control = (await runTool(['dpkg-deb', '--field', path])).trimEnd();
    const sha256 = createHash('sha256').update(await readFile(path)).digest('hex');
    stanzas.push(`${control}\nFilename: ./${deb}\nSize: ${(await stat(path)).size}\nSHA256: ${sha256}\n`);
  }
  await writeFile(join(directory, 'Packages'), stanzas.join('\n'));
}
