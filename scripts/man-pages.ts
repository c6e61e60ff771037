/**
 * Writes the manual pages of both CLIs, made from their verbs' own definitions:
 * node scripts/run-ts.cjs scripts/man-pages.ts OUT_DIR (OUT_DIR/man1/mesh-control.1, …).
 * The packages carry them; nothing is kept in the tree, so help and the page cannot drift.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { controllerManual } from '../actors/controller/cli/manual';
import { hostManual } from '../actors/host/cli/manual';

/** Writes mesh-control.1 and nox-mesh-host.1 under `outDir`/man1 and returns their paths. */
export async function writeManPages(outDir: string): Promise<string[]> {
  const dir = path.join(outDir, 'man1');
  await fs.mkdir(dir, { recursive: true });
  const pages: Array<[string, string]> = [
    ['mesh-control.1', controllerManual()],
    ['nox-mesh-host.1', hostManual()],
  ];
  for (const [name, text] of pages) await fs.writeFile(path.join(dir, name), text);
  return pages.map(([name]) => path.join(dir, name));
}

if (path.resolve(process.argv[1] ?? '') === __filename) {
  const outDir = process.argv[2];
  if (outDir === undefined) {
    process.stderr.write('usage: node scripts/run-ts.cjs scripts/man-pages.ts OUT_DIR\n');
    process.exit(2);
  }
  writeManPages(path.resolve(outDir)).then(
    (written) => process.stdout.write(`${written.join('\n')}\n`),
    (error: unknown) => {
      process.stderr.write(`could not write the manual pages: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
