import { existsSync } from 'node:fs';
import path from 'node:path';
import type { BenchContext, BenchMode, BenchSection } from '../bench-context';
import { describeChildFailure, runChild } from '../child-measurement';
import { failed, measured, notMeasured, type Figure, type FigureHead } from '../figure';
import { scriptFigures } from './script-figures';

/** A benchmark script kept by the part it measures, run as its author runs it. */
interface PartScript {
  section: string;
  /** Relative to the checkout. */
  script: string;
  /** The row shown while the script does not exist yet, or gave nothing. */
  head: FigureHead;
  /** What it arrives with, for that row. */
  arrivesWith: string;
  /** Its arguments by mode, or why it is not run in that mode. */
  args(mode: BenchMode): string[] | { skip: string };
  timeoutMs: number;
}

const SCRIPTS: readonly PartScript[] = [
  {
    section: 'controller',
    script: 'bench/controller/failover.ts',
    head: { id: 'controller.failover', group: 'controller', label: 'lease failover until the standby serves', unit: 'ms' },
    arrivesWith: 'the controller lease issue (bench/controller/failover.ts)',
    // A failover after kill -9 waits out the lease (15 s) by design: ten of them do not fit a
    // three-minute run.
    args: (mode) => (mode === 'quick' ? { skip: 'full run only: a failover after kill -9 waits out the 15 s lease, ten runs of it do not fit the quick run' } : ['10']),
    timeoutMs: 1_800_000,
  },
];

/**
 * The figures other parts keep their own scripts for and offer no section of: lease failover
 * (bench/controller/failover.ts). Each runs as a child process; its figures are read from its
 * output (see scriptFigures). A script not there yet is a row saying what it arrives with. (The
 * link offers its section, bench/link/link.bench.ts, which the runner imports.)
 */
export const colleagueSections: readonly BenchSection[] = SCRIPTS.map((part) => ({
  name: part.section,
  run: (ctx: BenchContext) => runPartScript(ctx, part),
}));

async function runPartScript(ctx: BenchContext, part: PartScript): Promise<Figure[]> {
  if (!existsSync(path.join(ctx.repoDir, part.script))) return [notMeasured(part.head, `not measured yet: arrives with ${part.arrivesWith}`)];
  const args = part.args(ctx.mode);
  if (!Array.isArray(args)) return [notMeasured(part.head, args.skip)];
  ctx.say(`${part.section}: ${part.script} ${args.join(' ')}`);
  const outcome = await runChild({ repoDir: ctx.repoDir, script: part.script, args, timeoutMs: part.timeoutMs, onLine: (line) => ctx.say(`${part.section}: ${line}`) });
  if (outcome.code !== 0) return [failed(part.head, describeChildFailure(part.script, outcome))];
  const figures = scriptFigures(outcome.stdout, part.section, part.head.id);
  if (figures.length === 0) return [failed(part.head, `${part.script} printed no figures the runner can read (see bench/README.md, "Scripts of other parts")`)];
  return figures.map((figure) => measured({ ...figure.head, label: `${part.head.label}: ${figure.head.label}` }, figure.values, { note: `from ${part.script} ${args.join(' ')}` }));
}
