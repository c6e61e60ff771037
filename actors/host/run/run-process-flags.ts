/**
 * The V8 flags of a `nox-mesh-host run` process: a host that works in bursts (loading its
 * modules, a pass over a thousand files) and then idles for minutes, for months, on a machine
 * that is also used for other work. Both trade a little CPU in a burst for memory held while
 * idle. Set from the process itself because the launcher and the single executable give Node
 * no command line to put them on; the benchmark's in-host passes run under the same flags.
 *
 * - `--semi-space-growth-factor=1` keeps the young generation at the size it starts with (two
 *   1 MB semi-spaces on 64-bit). V8 doubles it whenever a burst keeps it busy, up to 16 MB a
 *   semi-space, and hands the memory back only when its memory reducer gets round to it.
 *   Capped, the enrolled host holding 1,000 files idles about 13 MB smaller, and a pass takes as
 *   long as before (the objects a pass makes die young). `--max-semi-space-size` says the same,
 *   but V8 reads it once, before any JavaScript runs; the growth factor is read each time the
 *   young generation would grow.
 * - `--no-opt` leaves the host's code to the interpreter and the baseline compiler. Measured
 *   with 1,000 files: the idle host is about 5 MB smaller (the optimizing compiler's own code,
 *   some 4 MB of the node binary, is never paged in, and there is no optimized code to keep),
 *   while a pass that changes nothing takes about 37 ms instead of 19 (the goal is 100) and one
 *   that writes every file about 0.68 s instead of 0.6. A pass is bound by system calls, not by
 *   JavaScript; the drift pass runs every ten minutes.
 * - `--no-maglev`: Node 22 and later (V8 12+) have a second optimizing compiler, Maglev, which
 *   `--no-opt` (TurboFan) leaves on. The shipped host runs on Node 24: measured there with 1,000
 *   files, the idle enrolled host is about 4.6 MB smaller without it (one run each, 66.8 MB
 *   against 71.4). Node 20 has it off already.
 * - `--optimize-for-size` lets V8's memory reducer run in an idle host. On Node 24 the reducer
 *   judges the allocation rate by the last burst (an idle process makes no collections to
 *   update it), calls it high, and waits another 8 s, for ever (`--trace-memory-reducer`: "high
 *   alloc, foreground"); so the collections that drop start-up's garbage and code never come.
 *   Told to favour size, it collects anyway. Measured on Node 24 with 1,000 files, both flags
 *   together: 58.8 MB idle against 71.7 (median of three, each); on Node 20, whose reducer runs
 *   without it, 50.5 against 50.2, within the noise.
 * - `--bytecode-old-age=1` with `--flush-baseline-code` lets V8 drop the compiled code of a
 *   function that has not run since the last full garbage collection but one, baseline code
 *   included (V8 keeps a function's code for five collections by default, and baseline code
 *   always). Most of what a host compiles runs once: loading modules, parsing the command
 *   line, building the schemas, the first pass. V8's memory reducer runs its collections some
 *   ten seconds after a burst, and with these flags they take that code with them: measured
 *   with 1,000 files, the idle enrolled host is about 0.9 MB smaller. What runs again is
 *   compiled again from the source V8 keeps; a drift pass after an idle spell measured as long
 *   as one straight after another.
 */
export const RUN_PROCESS_FLAGS = [
  '--semi-space-growth-factor=1',
  '--no-opt',
  '--no-maglev',
  '--optimize-for-size',
  '--bytecode-old-age=1',
  '--flush-baseline-code',
] as const;

/**
 * Sets {@link RUN_PROCESS_FLAGS} on this process. Call it before the process loads its code.
 * `node:v8` is loaded here, not at the top: every verb's start imports this file (cli/main.ts),
 * and loading that module (with its heap and promise-hook helpers) cost an `apply` 2-6 ms of a
 * start it never used.
 */
export function setRunProcessFlags(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const v8 = require('node:v8') as typeof import('node:v8');
  for (const flag of RUN_PROCESS_FLAGS) v8.setFlagsFromString(flag);
}
