import { spawn } from 'node:child_process';
import path from 'node:path';

/** How a measurement in a child process went: everything it printed, and how it ended. */
export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** What to run. */
export interface ChildOptions {
  repoDir: string;
  /** The TypeScript file, relative to the checkout, run through scripts/run-ts.cjs. */
  script: string;
  args?: readonly string[];
  /** Flags for node itself (`--max-old-space-size=…`). */
  nodeFlags?: readonly string[];
  timeoutMs: number;
  /** Hears each line the child writes to standard error, as it comes. */
  onLine?: (line: string) => void;
}

/**
 * Runs a measurement as its own Node process, so a fleet of thousands gets a heap of its own
 * and gives all of it back, and a colleague's script runs as its author runs it. Killed after
 * `timeoutMs` (its outcome then carries the signal).
 */
export function runChild(options: ChildOptions): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), path.join(options.repoDir, 'scripts', 'run-ts.cjs'), options.script, ...(options.args ?? [])], {
      cwd: options.repoDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stderr += text;
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') options.onLine?.(line);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    const stopOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', stopOnExit);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', stopOnExit);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The last line of `stdout` that is a JSON object, parsed; undefined when there is none. */
export function lastJsonLine<T>(stdout: string): T | undefined {
  const lines = stdout.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('{') && line.endsWith('}'));
  for (const line of lines.reverse()) {
    try {
      return JSON.parse(line) as T;
    } catch {
      // Not JSON after all: look further up.
    }
  }
  return undefined;
}

/** Why a child's measurement gave nothing, in a few lines for the table's note. */
export function describeChildFailure(script: string, outcome: ChildOutcome): string {
  const how = outcome.signal !== null ? `was ended by ${outcome.signal}` : `exited with status ${outcome.code}`;
  // The last thing it said that is not a stack frame: the error's own message, usually.
  const said = `${outcome.stderr}\n${outcome.stdout}`.trim().split('\n').filter((line) => line.trim() !== '' && !/^\s+at /.test(line) && line.length < 1000).slice(-2).join(' / ');
  return `${script} ${how}${said === '' ? '' : `: ${said}`}`;
}
