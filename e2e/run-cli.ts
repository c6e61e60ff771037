import { spawn } from 'node:child_process';

/** How one command ended, and everything it printed. */
export interface CliResult {
  /** The command line, for messages. */
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one command to its end, the way a person at a terminal does, and returns what it
 * printed. A command still running after `timeoutMs` is killed (and its result says so by its
 * signal), so a hung verb fails a test instead of stalling it.
 */
export function runCli(argv: readonly [string, ...string[]], options: { cwd: string; timeoutMs?: number; label?: string }): Promise<CliResult> {
  const [program, ...args] = argv;
  const command = options.label ?? argv.join(' ');
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => (stderr += `could not start: ${error.message}\n`));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ command, code, signal, stdout, stderr });
    });
  });
}

/** The result of a command that must have succeeded: throws, quoting what it printed, when it did not. */
export function succeeded(result: CliResult): CliResult {
  if (result.code === 0) return result;
  const how = result.signal !== null ? `was ended by ${result.signal}` : `exited with status ${result.code}`;
  throw new Error(`\`${result.command}\` ${how}:\n${result.stderr}${result.stdout}`);
}

/** The JSON document a successful `--json` command printed. */
export function jsonOf<T>(result: CliResult): T {
  succeeded(result);
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`\`${result.command}\` did not print one JSON document:\n${result.stdout}`);
  }
}
