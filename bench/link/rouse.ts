/**
 * The link, measured (bench/link/link-measurements.ts): how long a rouse takes to bring a frozen
 * link back, what a rouse of a working link costs, and how long a link that froze with nobody
 * rousing it takes to be found dead — with the host's default timings. Prints a table; asserts
 * nothing.
 *
 *   node scripts/run-ts.cjs bench/link/rouse.ts [--runs 50] [--held-runs 3] [--dead-link-runs 3]
 *
 * About two and a half minutes with the defaults: each dead-link run waits out the 30 s.
 */
import { linkTable, measureLink } from './link-measurements';

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number of runs, got ${JSON.stringify(process.argv[index + 1])}`);
  return value;
}

async function main(): Promise<void> {
  const started = performance.now();
  const figures = await measureLink({
    runs: argument('--runs', 50),
    heldRuns: argument('--held-runs', 3),
    deadLinkRuns: argument('--dead-link-runs', 3),
  }, (line) => {
    process.stderr.write(`[${Math.round((performance.now() - started) / 1000)} s] ${line}\n`);
  });
  process.stdout.write(linkTable(figures));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  },
);
