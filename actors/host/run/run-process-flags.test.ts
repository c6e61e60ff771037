import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fetchNode } from '../../../scripts/fetch-node';
import { hotFunctionScript } from '../../shared/testing/hot-function';

// V8's flags belong to the whole process, so each case runs in a Node of its own, with and
// without the run process's flags.

const repo = path.resolve(__dirname, '..', '..', '..');
const MB = 1024 * 1024;

function measuredIn(withFlags: boolean, body: string): string {
  const script = `
    const v8 = require('node:v8');
    if (${withFlags}) require(${JSON.stringify(path.join(__dirname, 'run-process-flags'))}).setRunProcessFlags();
    ${body}
  `;
  const run = spawnSync(process.execPath, ['-r', path.join(repo, 'scripts', 'register.cjs'), '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the measuring process failed: ${run.stderr}`);
  return run.stdout;
}

// The same bursts of short-lived objects a pass makes; then the size of the young generation.
const YOUNG_GENERATION_AFTER_BURSTS = `
  let kept = [];
  for (let burst = 0; burst < 100; burst += 1) kept = Array.from({ length: 20000 }, (_, i) => ({ i, text: 'line ' + i }));
  const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  process.stdout.write(String(young.space_size));
`;

// Functions that run once, as loading modules does (from a module file: V8 keeps the code of
// eval'd functions); then how much bytecode is left once V8 has made three full collections of
// its own accord (a collection forced with gc() never ages code).
const BYTECODE_AFTER_COLLECTIONS = `
  const fs = require('node:fs');
  const os = require('node:os');
  const { PerformanceObserver, constants } = require('node:perf_hooks');
  const dir = fs.mkdtempSync(require('node:path').join(os.tmpdir(), 'run-flags-'));
  let source = '';
  for (let i = 0; i < 400; i += 1) source += 'exports.f' + i + ' = function (a) { let s = a; for (let k = 0; k < 3; k += 1) s += k * ' + i + '; return String(s).length; };\\n';
  fs.writeFileSync(dir + '/once.js', source);
  let sum = 0;
  for (const fn of Object.values(require(dir + '/once.js'))) sum += fn(1);
  fs.rmSync(dir, { recursive: true, force: true });
  const before = v8.getHeapCodeStatistics().bytecode_and_metadata_size;
  let majors = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors += 1;
  }).observe({ entryTypes: ['gc'] });
  (async () => {
    let held = [];
    while (majors < 3) {
      held.push(new Array(100000).fill(1.5));
      if (held.length > 30) held = [];
      await new Promise((resolve) => setImmediate(resolve));
    }
    const after = v8.getHeapCodeStatistics().bytecode_and_metadata_size;
    process.stdout.write(JSON.stringify({ before, after, sum }));
  })();
`;

/**
 * Runs `body` in a process of the shipped runtime (the Node the single executable carries), with
 * or without the run process's flags and with V8 tracing its memory reducer, until `done` says
 * the trace is enough or `ms` pass; returns the trace.
 */
async function memoryReducerTrace(withFlags: boolean, body: string, done: (trace: string) => boolean, ms: number): Promise<string> {
  const node = await fetchNode();
  const script = `
    const v8 = require('node:v8');
    if (${withFlags}) require(${JSON.stringify(path.join(__dirname, 'run-process-flags'))}).setRunProcessFlags();
    v8.setFlagsFromString('--trace-memory-reducer');
    ${body}
  `;
  const child = spawn(node, ['-r', path.join(repo, 'scripts', 'register.cjs'), '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let trace = '';
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the memory reducer's trace was not enough after ${ms} ms: ${JSON.stringify(trace)}`)), ms);
      child.stdout.on('data', (chunk: Buffer) => {
        trace += chunk.toString();
        if (done(trace)) {
          clearTimeout(timer);
          resolve(trace);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => { trace += chunk.toString(); });
      child.on('exit', (code) => reject(new Error(`the measuring process exited ${code}: ${trace}`)));
    });
  } finally {
    child.kill('SIGKILL');
  }
}

// A burst of allocation as a pass makes, then nothing: an idle host between passes.
const BURST_THEN_IDLE = `
  let held = [];
  for (let burst = 0; burst < 200; burst += 1) {
    held.push(Array.from({ length: 20000 }, (_, i) => ({ i, text: 'line ' + i })));
    if (held.length > 20) held = [];
  }
  held = null;
  setInterval(() => {}, 1000);
`;

describe('the run process\'s V8 flags', () => {
  test('have the memory reducer of the shipped runtime favour memory, so that it collects in an idle process whatever rate the last burst had', async () => {
    // The reducer says at each check whether the allocation rate is low or high and whether it
    // favours memory ("background") or not ("foreground"). Not favouring it, a check that finds
    // the rate high only schedules the next one: in an idle host the rate is that of its last
    // burst, and on Node 24 the collection never came.
    const decision = /Memory reducer: (low|high) alloc, (foreground|background)/;
    const said = async (withFlags: boolean) => decision.exec(await memoryReducerTrace(withFlags, BURST_THEN_IDLE, (trace) => decision.test(trace), 120_000))?.[2];

    expect(await said(false)).toBe('foreground');
    expect(await said(true)).toBe('background');
    // Favouring memory, it collects (a "started GC" follows).
    expect(await memoryReducerTrace(true, BURST_THEN_IDLE, (trace) => /Memory reducer: started GC/.test(trace), 120_000)).toMatch(/started GC #1/);
  }, 400_000);


  test('keep the young generation at its starting size through bursts that would grow it', () => {
    const uncapped = Number(measuredIn(false, YOUNG_GENERATION_AFTER_BURSTS));
    const capped = Number(measuredIn(true, YOUNG_GENERATION_AFTER_BURSTS));

    // Without the flags the same bursts grow it, so the flags are what hold it.
    expect(uncapped).toBeGreaterThan(8 * MB);
    expect(capped).toBeLessThanOrEqual(2 * MB);
  });

  test('let V8 drop the code of functions that ran once, where it would keep it through three collections', () => {
    const kept = JSON.parse(measuredIn(false, BYTECODE_AFTER_COLLECTIONS)) as { before: number; after: number };
    const flushed = JSON.parse(measuredIn(true, BYTECODE_AFTER_COLLECTIONS)) as { before: number; after: number };

    // Node's own start-up code goes either way; the 400 functions are most of what is left.
    expect(kept.after).toBeGreaterThan(kept.before / 2);
    expect(flushed.after).toBeLessThan(flushed.before / 4);
  });

  test('leave even a hot function unoptimized, where V8 alone would optimize it', () => {
    const alone = JSON.parse(measuredIn(false, hotFunctionScript({ ms: 20_000 }))) as { optimized: boolean; rounds: number };
    expect(alone.optimized).toBe(true);
    // Called twice as often as V8 alone needed to optimize it, and still not optimized.
    const rounds = Math.max(2 * alone.rounds, 1000);
    expect(JSON.parse(measuredIn(true, hotFunctionScript({ rounds })))).toEqual({ optimized: false, rounds });
  });
});
