import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliResult } from '../e2e/run-cli';
import { median } from './stats';

const GNU_TIME = '/usr/bin/time';

/** One command run to its end: how long, its peak memory when it could be read, and what it printed. */
export interface MeasuredRun {
  ms: number;
  /** Maximum resident set size (GNU time's %M), MB; null without /usr/bin/time. */
  peakMb: number | null;
  /** CPU time in user space (GNU time's %U, to 10 ms), ms; null without /usr/bin/time. */
  userMs: number | null;
  result: CliResult;
}

/**
 * Runs `argv` to its end and times it, spawn to exit. Under GNU time (`/usr/bin/time`, Debian's
 * package `time`) when the machine has it, for the peak memory as well; its fork and exec add
 * about a millisecond, the same for every tool measured.
 */
export async function runMeasured(argv: readonly [string, ...string[]], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; label?: string }): Promise<MeasuredRun> {
  const peakFile = existsSync(GNU_TIME) ? path.join(os.tmpdir(), `mesh-bench-peak-${process.pid}-${Math.random().toString(36).slice(2)}`) : undefined;
  const command: [string, ...string[]] = peakFile === undefined ? [...argv] : [GNU_TIME, '-f', '%M %U', '-o', peakFile, ...argv];
  const started = performance.now();
  const result = await run(command, options.label ?? argv.join(' '), options.cwd, options.env ?? process.env, options.timeoutMs ?? 600_000);
  const ms = performance.now() - started;
  let peakMb: number | null = null;
  let userMs: number | null = null;
  if (peakFile !== undefined) {
    const text = await fs.readFile(peakFile, 'utf8').catch(() => '');
    await fs.rm(peakFile, { force: true });
    // The last line is ours; GNU time puts "Command exited with non-zero status" lines above it.
    const [kb, user] = (text.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
    peakMb = kb !== undefined && Number.isFinite(kb) && kb > 0 ? kb / 1024 : null;
    userMs = user !== undefined && Number.isFinite(user) ? user * 1000 : null;
  }
  return { ms, peakMb, userMs, result };
}

/** "peak RSS 23 MB" from several runs' peaks (their median), or '' when none was read. */
export function peakNote(peaks: ReadonlyArray<number | null>): string {
  const known = peaks.filter((peak): peak is number => peak !== null);
  return known.length === 0 ? '' : `peak RSS ${Math.round(median(known))} MB`;
}

function run(argv: readonly [string, ...string[]], label: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CliResult> {
  const [program, ...args] = argv;
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => (stderr += `could not start: ${error.message}\n`));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ command: label, code, signal, stdout, stderr });
    });
  });
}
