import { spawnSync } from 'node:child_process';
import path from 'node:path';

// V8's flags belong to the whole process, so each case runs in a Node of its own.

const repo = path.resolve(__dirname, '..', '..', '..');

// A function hot enough for the optimizing compiler, called until V8 has optimized it (bit 4 of
// %GetOptimizationStatus) or for `ms` (see run-process-flags.test.ts).
function hotFunctionIn(resources: number | undefined, ms: number): { optimized: boolean; rounds: number } {
  const script = `
    const v8 = require('node:v8');
    if (${resources !== undefined}) require(${JSON.stringify(path.join(__dirname, 'one-pass-flags'))}).setOnePassFlagsFor(${resources ?? 0});
    v8.setFlagsFromString('--allow-natives-syntax');
    function hot(n) { let sum = 0; for (let i = 0; i < n; i += 1) sum += i % 7; return sum; }
    const optimized = () => (eval('%GetOptimizationStatus(hot)') & 16) !== 0;
    const until = Date.now() + ${ms};
    let rounds = 0;
    while (!optimized() && Date.now() < until) { hot(1000); rounds += 1; }
    process.stdout.write(JSON.stringify({ optimized: optimized(), rounds }));
  `;
  const run = spawnSync(process.execPath, ['-r', path.join(repo, 'scripts', 'register.cjs'), '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the measuring process failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { optimized: boolean; rounds: number };
}

describe('the flags of apply and reconcile', () => {
  test('leave even a hot function of a pass over 1,000 resources to the interpreter and baseline compiler, where V8 alone would optimize it', () => {
    const alone = hotFunctionIn(undefined, 20_000);
    const flagged = hotFunctionIn(1000, 2_000);
    expect(alone.optimized).toBe(true);
    expect(flagged.optimized).toBe(false);
    expect(flagged.rounds).toBeGreaterThan(alone.rounds);
  });

  test('are left as they were for a pass over a few resources, where changing them costs more than they save', () => {
    expect(hotFunctionIn(10, 20_000).optimized).toBe(true);
  });
});
