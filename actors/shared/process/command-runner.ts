import { childProcess } from './child-process';
import { monotonicMs } from '../time/monotonic-ms';

/**
 * The narrow seam through which the host runs other programs (package managers, service
 * managers, container engines, actions). The real one spawns processes; tests of backends
 * whose program cannot run here (docker, a booted systemd) pass a small recording fake.
 */
export interface CommandRunner {
  run(argv: readonly string[], options?: RunOptions): Promise<RunResult>;
}

/** How to run one command. */
export interface RunOptions {
  env?: Record<string, string>;
  /** Replace the environment instead of adding to it. */
  replaceEnv?: boolean;
  cwd?: string;
  /** Killed (SIGTERM, then SIGKILL after 2 s) when it runs longer. */
  timeoutMs?: number;
  input?: string;
  signal?: AbortSignal;
  /** Each of stdout and stderr keeps at most this many bytes (the tail is dropped, and said). */
  maxOutputBytes?: number;
}

/** What a command did. `code` is null when it was ended by a signal. */
export interface RunResult {
  argv: readonly string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Spawning failed (no such program, permission): the reason, and code/signal are null. */
  spawnError?: string;
  durationMs: number;
}

/** True when the command ran and exited 0. */
export function succeeded(result: RunResult): boolean {
  return result.code === 0 && result.spawnError === undefined && !result.timedOut;
}

/** One line saying how a command failed, for reports and errors. */
export function describeFailure(result: RunResult): string {
  const command = result.argv.join(' ');
  if (result.spawnError !== undefined) return `${command}: could not start: ${result.spawnError}`;
  if (result.timedOut) return `${command}: timed out after ${Math.round(result.durationMs / 1000)} s`;
  const status = result.code === null ? `ended by ${result.signal}` : `exited ${result.code}`;
  const said = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-3).join(' / ');
  return said === '' ? `${command}: ${status}` : `${command}: ${status}: ${said}`;
}

const DEFAULT_MAX_OUTPUT = 64 * 1024;

/** The real runner: spawns the program directly (no shell), with bounded output. */
export class ProcessRunner implements CommandRunner {
  run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const started = monotonicMs();
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    return new Promise((resolve) => {
      const [program, ...args] = argv;
      if (program === undefined) throw new TypeError('ProcessRunner.run needs a program to run');
      const env = options.replaceEnv ? { ...options.env } : { ...process.env, ...options.env };
      const child = childProcess().spawn(program, args, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal });
      const stdout = new BoundedText(max);
      const stderr = new BoundedText(max);
      let timedOut = false;
      let spawnError: string | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        killTimer = setTimeout(() => child.kill('SIGKILL'), 2000);
      }, options.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
      child.on('error', (error) => { spawnError = error.message; });
      child.stdin.on('error', () => undefined); // a program that does not read its input is fine
      child.stdin.end(options.input ?? '');
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        if (killTimer) clearTimeout(killTimer);
        resolve({
          argv,
          code: spawnError === undefined ? code : null,
          signal: spawnError === undefined ? signal : null,
          stdout: stdout.text(),
          stderr: stderr.text(),
          timedOut,
          ...(spawnError === undefined ? {} : { spawnError }),
          durationMs: monotonicMs() - started,
        });
      });
    });
  }
}

/** Keeps the first `max` bytes of a stream and counts the rest. */
class BoundedText {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  constructor(private readonly max: number) {}
  add(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room <= 0) { this.dropped += chunk.length; return; }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
    this.dropped += chunk.length - part.length;
  }
  text(): string {
    const body = Buffer.concat(this.chunks).toString('utf8');
    return this.dropped === 0 ? body : `${body}\n… ${this.dropped} more bytes not kept`;
  }
}
