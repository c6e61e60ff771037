import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { hotFunctionScript } from '../../shared/testing/hot-function';

// V8's flags belong to the whole process, so each case runs in a Node of its own.

const repo = path.resolve(__dirname, '..', '..', '..');

// What the hot function did in a Node of its own, after setOnePassFlagsFor(resources) when given.
function hotFunctionIn(resources: number | undefined, until: { ms: number } | { rounds: number }): { optimized: boolean; rounds: number } {
  const flags = resources === undefined ? '' : `require(${JSON.stringify(path.join(__dirname, 'one-pass-flags'))}).setOnePassFlagsFor(${resources});`;
  const script = `const v8 = require('node:v8'); ${flags} ${hotFunctionScript(until)}`;
  const run = spawnSync(process.execPath, ['-r', path.join(repo, 'scripts', 'register.cjs'), '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the measuring process failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { optimized: boolean; rounds: number };
}

describe('the flags of apply and reconcile', () => {
  test('leave even a hot function of a pass over 1,000 resources to the interpreter and baseline compiler, where V8 alone would optimize it', () => {
    const alone = hotFunctionIn(undefined, { ms: 20_000 });
    expect(alone.optimized).toBe(true);
    // Called twice as often as V8 alone needed to optimize it, and still not optimized.
    const rounds = Math.max(2 * alone.rounds, 1000);
    expect(hotFunctionIn(1000, { rounds })).toEqual({ optimized: false, rounds });
  });

  test('are left as they were for a pass over a few resources, where changing them costs more than they save', () => {
    expect(hotFunctionIn(10, { ms: 20_000 }).optimized).toBe(true);
  });
});
