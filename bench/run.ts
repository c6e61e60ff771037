/**
 * `npm run bench`: every figure of bench/README.md, measured on this machine, printed as a
 * table and written to bench/results/full.json and full.md; `npm run bench -- --quick`
 * measures smaller counts with fewer runs (for CI) and writes quick.json and quick.md. Either
 * also writes latest.json and latest.md, the table of the last run, whichever it was.
 * `--only host,fleet` measures those sections alone and writes nothing.
 * Nothing is asserted on time: a missed goal is a `no` in the table, and the exit status is
 * non-zero only when the benchmark itself could not run.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ready } from '../actors/shared/crypto';
import type { BenchContext, BenchMode, BenchSection } from './bench-context';
import type { BenchResults } from './bench-results';
import { enrolmentSection } from './enrolment/enrolment.bench';
import { failed, type Figure } from './figure';
import { pushSection } from './fleet/push.bench';
import { heartbeatSection } from './fleet/heartbeat.bench';
import { formatTable } from './format-table';
import { hostSection } from './host/host.bench';
import { linkSection } from './link/link.bench';
import { machineFacts } from './machine-facts';
import { chaosSeedsSection } from './cluster/chaos-seeds';
import { clusterSection } from './cluster/cluster.bench';
import { colleagueSections } from './others/colleague-sections';
import { overlaySection } from './overlay/overlay.bench';
import { peersSection } from './peers/peers.bench';
import { removeSettled } from './remove-settled';

const REPO_DIR = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');

/** Every section, in the order of the table. */
export const SECTIONS: readonly BenchSection[] = [hostSection, enrolmentSection, pushSection, heartbeatSection, linkSection, overlaySection, ...colleagueSections, peersSection, clusterSection, chaosSeedsSection];

interface Arguments {
  mode: BenchMode;
  only: Set<string> | undefined;
  seeds: number[] | undefined;
}

/** `--seeds 20` is seeds 1 to 20; `--seeds 5-12` is 5 to 12. */
function parseSeeds(text: string | undefined): number[] {
  const match = /^(\d+)(?:-(\d+))?$/.exec(text ?? '');
  const first = match?.[2] === undefined ? 1 : Number(match[1]);
  const last = match?.[2] === undefined ? Number(match?.[1]) : Number(match[2]);
  if (match === null || !(first >= 1 && last >= first && last - first < 1000)) {
    throw new Error(`--seeds takes a count (20: seeds 1 to 20) or a range (5-12), got ${JSON.stringify(text)}; next: npm run bench -- --only cluster-chaos --seeds 20`);
  }
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

function parseArguments(argv: readonly string[]): Arguments {
  let mode: BenchMode = 'full';
  let only: Set<string> | undefined;
  let seeds: number[] | undefined;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index];
    if (arg === '--quick') mode = 'quick';
    else if (arg === '--only') only = new Set((argv[++index] ?? '').split(',').filter((name) => name !== ''));
    else if (arg?.startsWith('--only=')) only = new Set(arg.slice('--only='.length).split(',').filter((name) => name !== ''));
    else if (arg === '--seeds') seeds = parseSeeds(argv[++index]);
    else if (arg?.startsWith('--seeds=')) seeds = parseSeeds(arg.slice('--seeds='.length));
    else throw new Error(`unknown argument ${JSON.stringify(arg)}; usage: npm run bench -- [--quick] [--only ${SECTIONS.map((s) => s.name).join(',')}] [--seeds N|A-B]`);
  }
  const unknown = [...(only ?? [])].filter((name) => !SECTIONS.some((section) => section.name === name));
  if (unknown.length > 0) throw new Error(`no section named ${unknown.join(', ')}; the sections are ${SECTIONS.map((s) => s.name).join(', ')}`);
  return { mode, only, seeds };
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  await ready();
  const started = new Date();
  const clock = performance.now();
  const say = (line: string): void => {
    process.stderr.write(`[${((performance.now() - clock) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  };
  say(`${args.mode} run on ${os.cpus().length} cores${args.only === undefined ? '' : `, sections ${[...args.only].join(', ')} only`}`);
  const figures: Figure[] = [];
  for (const section of SECTIONS) {
    if (args.only !== undefined && !args.only.has(section.name)) continue;
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `mesh-bench-${section.name}-`));
    const ctx: BenchContext = { mode: args.mode, workDir, repoDir: REPO_DIR, earlier: [...figures], ...(args.seeds === undefined ? {} : { seeds: args.seeds }), say: (line) => say(line) };
    const sectionStarted = performance.now();
    try {
      figures.push(...(await section.run(ctx)));
    } catch (error) {
      say(`${section.name}: ${(error as Error)?.stack ?? String(error)}`);
      figures.push(failed({ id: `${section.name}.section`, group: section.name, label: `the ${section.name} section`, unit: 'ms' }, error));
    } finally {
      // The next section starts on a settled disk: what this one wrote, and its removal, are
      // written out before the next section's first timed run, not during it.
      await removeSettled(workDir).catch((error: unknown) => say(`${section.name}: cleaning up ${workDir}: ${String(error)}`));
    }
    say(`${section.name}: done in ${((performance.now() - sectionStarted) / 1000).toFixed(0)} s`);
  }
  const results: BenchResults = {
    format: 1,
    mode: args.mode,
    started_at: started.toISOString(),
    duration_s: Math.round((performance.now() - clock) / 1000),
    machine: machineFacts(),
    figures,
  };
  const table = formatTable(results);
  process.stdout.write(`\n${table}`);
  if (args.only === undefined) {
    await fs.mkdir(RESULTS_DIR, { recursive: true });
    for (const name of [args.mode, 'latest']) {
      await fs.writeFile(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
      await fs.writeFile(path.join(RESULTS_DIR, `${name}.md`), table);
    }
    say(`written: bench/results/${args.mode}.json and .md, and latest.json and .md`);
  }
}

main().then(
  // Sections may leave client sockets and timers behind on failure; the results are out.
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(2);
  },
);
