/**
 * The V8 flags of a process that makes one pass and ends (`apply`, `reconcile`): no optimizing
 * compiler. Such a process lives well under a second, and what TurboFan (and Maglev, on the
 * shipped Node 24) compile on their own threads is mostly thrown away at its exit while it is
 * counted in its CPU: `perf` of an apply of 1,000 files put 18 % of its samples in TurboFan.
 * Without it the bundle's apply spent about 50-110 ms less user CPU here (bench/README.md, "Against
 * cf-agent"); its JavaScript runs in the interpreter and the baseline compiler, as every pass of
 * `run` already does (run-process-flags.ts).
 *
 * They are set only for a pass over at least ONE_PASS_FLAGS_FROM resources, just before it runs
 * (apply.command.ts, reconcile.command.ts). Setting them costs something of its own: V8 takes
 * cached code only under the flags it was made with, so every built-in module of Node required
 * after the change is compiled from its source (measured on Node 20: `crypto`, `child_process`,
 * `net`, `stream` and `os` took 14-24 ms instead of 4-6), and an apply of nothing spent about
 * 35 ms more user CPU with them than without. The bundle's and the executable's own code caches
 * are taken before, when the bundle is compiled.
 */
export const ONE_PASS_FLAGS = ['--no-opt', '--no-maglev'] as const;

/** How many resources a pass covers before it is worth running without the optimizing compiler: a batch. */
export const ONE_PASS_FLAGS_FROM = 256;

/**
 * Sets {@link ONE_PASS_FLAGS} on this process when a pass is about to cover `resources` of at
 * least ONE_PASS_FLAGS_FROM; says whether it did. Call it just before the pass, once.
 */
export function setOnePassFlagsFor(resources: number): boolean {
  // Written so that a count that is not a number leaves the flags alone.
  if (!(resources >= ONE_PASS_FLAGS_FROM)) return false;
  setOnePassFlags();
  return true;
}

/** Sets {@link ONE_PASS_FLAGS} on this process. */
export function setOnePassFlags(): void {
  // Before the flags, with its cache (see above): a pass of more than a few files spawns
  // `sync -f` (appliers/sync-file-systems.ts), and actions and package managers are processes.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('node:child_process');
  // Loaded here: see run-process-flags.ts.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const v8 = require('node:v8') as typeof import('node:v8');
  for (const flag of ONE_PASS_FLAGS) v8.setFlagsFromString(flag);
}
