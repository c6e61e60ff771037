/**
 * `npm run charts`: draws every machine in machines/ as docs/charts/<name>.mmd (Mermaid) and
 * docs/charts/<name>.svg (Graphviz, rendered offline), and removes charts of machines that are
 * gone. `npm run charts -- --check` writes nothing and exits 1, listing what is missing or
 * stale, when the committed charts are not what the machines draw now (for CI).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compareCharts, drawCharts, REPOSITORY_ROOT } from '../actors/controller/charts/draw-charts';
import { scriptArguments } from './script-arguments';

async function main(): Promise<number> {
  const check = scriptArguments(process.argv.slice(2), { check: { type: 'boolean' } }, 'npm run charts [-- --check]').check ?? false;
  const { files, failures } = await drawCharts({ root: REPOSITORY_ROOT });
  for (const failure of failures) process.stderr.write(`error: ${failure.source}: ${failure.error}\n`);
  const { missing, stale, extra } = compareCharts(REPOSITORY_ROOT, files);

  if (check) {
    const out = [
      ...missing.map((path) => `missing: ${path}`),
      ...stale.map((path) => `stale:   ${path}`),
      ...extra.map((path) => `stale:   ${path} (no machine draws it any more)`),
    ];
    if (out.length > 0) {
      process.stderr.write(`${out.join('\n')}\nnext:  run \`npm run charts\` and commit docs/charts/\n`);
      return 1;
    }
    process.stdout.write(`charts are current (${files.length} files)\n`);
    return failures.length > 0 ? 1 : 0;
  }

  for (const file of files.filter((candidate) => missing.includes(candidate.path) || stale.includes(candidate.path))) {
    mkdirSync(dirname(join(REPOSITORY_ROOT, file.path)), { recursive: true });
    writeFileSync(join(REPOSITORY_ROOT, file.path), file.content);
    process.stdout.write(`wrote   ${file.path}\n`);
  }
  for (const path of extra) {
    rmSync(join(REPOSITORY_ROOT, path));
    process.stdout.write(`removed ${path}\n`);
  }
  process.stdout.write(`${files.length} chart files, ${missing.length + stale.length} written, ${extra.length} removed\n`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  },
);
