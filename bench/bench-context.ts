import type { Figure } from './figure';

/** How much a run measures: `quick` for CI (under three minutes), `full` for the published table. */
export type BenchMode = 'quick' | 'full';

/** What every section is given. */
export interface BenchContext {
  mode: BenchMode;
  /** A directory of its own for the section's files, removed after the run. */
  workDir: string;
  /** The checkout (where bin/, dist/ and package.json are). */
  repoDir: string;
  /** The figures measured so far in this run: a later section may set its own beside them. */
  earlier: readonly Figure[];
  /** The chaos seeds asked for with `--seeds` (bench/cluster/chaos-seeds.ts), or undefined for the mode's own. */
  seeds?: readonly number[];
  /** One progress line, for the person watching (standard error, never the table). */
  say(line: string): void;
}

/**
 * One part of the benchmark: measures and returns its figures. A figure it cannot measure is
 * returned as not_measured or failed rather than thrown, so the other figures of the section
 * still count; a section that throws is recorded as one failed figure by the runner.
 */
export interface BenchSection {
  name: string;
  run(ctx: BenchContext): Promise<Figure[]>;
}

/** `quick` or `full` value by mode: the counts and run numbers of each section read as one line. */
export function byMode<T>(ctx: Pick<BenchContext, 'mode'>, quick: T, full: T): T {
  return ctx.mode === 'quick' ? quick : full;
}
