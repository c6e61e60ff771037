/**
 * A script for a Node of its own, with `v8` (node:v8) in scope: it calls a function hot enough for
 * V8's optimizing compiler until V8 has optimized it (bit 4 of %GetOptimizationStatus) and prints
 * `{ optimized, rounds }`. `{ ms }` bounds it by time, for how long V8 alone may take (its compiler
 * has a thread of its own, slow on a loaded machine); `{ rounds }` by calls, so a case that must
 * stay unoptimized is held to a count of calls, never to a clock.
 */
export function hotFunctionScript(until: { ms: number } | { rounds: number }): string {
  const more = 'ms' in until ? `Date.now() - started < ${until.ms}` : `rounds < ${until.rounds}`;
  return `
  v8.setFlagsFromString('--allow-natives-syntax');
  function hot(n) { let sum = 0; for (let i = 0; i < n; i += 1) sum += i % 7; return sum; }
  const optimized = () => (eval('%GetOptimizationStatus(hot)') & 16) !== 0;
  const started = Date.now();
  let rounds = 0;
  while (!optimized() && ${more}) { hot(1000); rounds += 1; }
  process.stdout.write(JSON.stringify({ optimized: optimized(), rounds }));
`;
}
