import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Writes `lib/apk/db/installed` under `root` in apk's own format, one block per package with
 * the fields apk writes (checksum, name, version, architecture, size, description, files), so
 * the backend's read-back parses what a real Alpine machine has.
 */
export async function writeApkInstalled(root: string, packages: ReadonlyMap<string, string>): Promise<void> {
  const path = join(root, 'lib/apk/db/installed');
  await mkdir(dirname(path), { recursive: true });
  const blocks = [...packages].map(([name, version]) =>
    [
      'C:Q1AAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      `P:${name}`,
      `V:${version}`,
      'A:x86_64',
      'S:1024',
      'I:4096',
      `T:${name}, installed by a test`,
      'U:https://example.invalid',
      'L:Apache-2.0',
      `o:${name}`,
      't:1700000000',
      `F:usr/share/${name}`,
      'R:version',
      'a:0:0:644',
      '',
    ].join('\n'),
  );
  await writeFile(path, blocks.join('\n'));
}

/** Reads the name → version pairs back the simple way, for a fake that adds to them. */
export async function readApkInstalledForFake(root: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(join(root, 'lib/apk/db/installed'), 'utf8');
  } catch {
    return new Map();
  }
  const packages = new Map<string, string>();
  for (const block of text.split('\n\n')) {
    const name = /^P:(.*)$/m.exec(block)?.[1];
    const version = /^V:(.*)$/m.exec(block)?.[1];
    if (name !== undefined && version !== undefined) packages.set(name, version);
  }
  return packages;
}
