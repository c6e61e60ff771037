/**
 * The V8 flags of a process that makes one pass and ends (`apply`, `reconcile`): no optimizing
 * compiler. Such a process lives well under a second, and what TurboFan (and Maglev, on the
 * shipped Node 24) compile on their own threads is mostly thrown away at its exit while it is
 * counted in its CPU: `perf` of an apply of 1,000 files put 18 % of its samples in TurboFan.
 * Without it the apply spent about 35-60 ms less user CPU here (bench/README.md, "Against
 * cf-agent"); its JavaScript runs in the interpreter and the baseline compiler, as every pass of
 * `run` already does (run-process-flags.ts).
 *
 * Set after the bundle is compiled, so a code cache made without them still fits (V8 checks
 * flags when it takes cached data), and before any of the verb's code runs.
 */
export const ONE_PASS_FLAGS = ['--no-opt', '--no-maglev'] as const;

/** The verbs that make one pass over a declaration and end. */
export const ONE_PASS_VERBS: ReadonlySet<string> = new Set(['apply', 'reconcile']);

/** Sets {@link ONE_PASS_FLAGS} on this process. */
export function setOnePassFlags(): void {
  // Loaded here: see run-process-flags.ts.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const v8 = require('node:v8') as typeof import('node:v8');
  for (const flag of ONE_PASS_FLAGS) v8.setFlagsFromString(flag);
}
