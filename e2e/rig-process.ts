import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { done, NeverComing, notYet, until } from './until';

/** How a process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What to start. */
export interface RigProcessOptions {
  /** A short name for messages: `broker`, `serve`, `host a`. */
  label: string;
  /** The program and its arguments. */
  argv: readonly [string, ...string[]];
  cwd: string;
  /** Where everything the process prints is also written, so it can be read after it has gone. */
  logFile: string;
  /** Variables added to its environment (a test's process.env is jest's copy, which children do not see). */
  env?: Readonly<Record<string, string>>;
}

/**
 * One long-running process of the rig (a broker, a controller, a host), with everything it
 * printed on either stream kept in order, so a test can wait for a line and a failure can show
 * what the process said.
 */
export class RigProcess {
  readonly label: string;
  readonly logFile: string;
  /** Settles when the process has ended, however it ended. */
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess;
  private readonly log: WriteStream;
  private text = '';
  private exit: ProcessExit | undefined;

  constructor(options: RigProcessOptions) {
    this.label = options.label;
    this.logFile = options.logFile;
    this.log = createWriteStream(options.logFile, { flags: 'a' });
    const [program, ...args] = options.argv;
    this.child = spawn(program, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }) });
    const take = (chunk: Buffer): void => {
      this.text += chunk.toString('utf8');
      this.log.write(chunk);
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
    this.exited = new Promise<ProcessExit>((resolve) => {
      // 'close', not 'exit': everything it printed has been read by then.
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.log.end(() => resolve({ code, signal }));
      });
      this.child.once('error', (error) => {
        this.text += `\n(could not start: ${error.message})\n`;
      });
    });
  }

  /** The process id. */
  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** True until the process has ended. */
  get running(): boolean {
    return this.exit === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything it printed so far, from character `from` on. */
  output(from = 0): string {
    return this.text.slice(from);
  }

  /** A mark in its output: pass it as `from` to look only at what comes after now. */
  mark(): number {
    return this.text.length;
  }

  /**
   * Waits until its output from `from` on matches `pattern`, and returns the match. Fails at
   * once if the process ends without printing it.
   */
  async waitFor(pattern: RegExp, options: { from?: number; timeoutMs?: number } = {}): Promise<RegExpExecArray> {
    const from = options.from ?? 0;
    return until(`${this.label} to print ${pattern}`, () => {
      const match = pattern.exec(this.output(from));
      if (match !== null) return done(match);
      // An ended process prints nothing more: say so at once rather than time out.
      if (!this.running) throw new NeverComing(`${this.label} ended (${describeExit(this.exit)}) without printing ${pattern}; it printed:\n${this.output()}`);
      return notYet(`${this.label} printed:\n${tail(this.output(from))}`);
    }, { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 50 });
  }

  /** Sends a signal, if it is still running. */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /**
   * Stops it the way a service manager does: SIGTERM, and SIGKILL if it has not ended after
   * `graceMs`. Returns how it ended.
   */
  async stop(graceMs = 10_000): Promise<ProcessExit> {
    if (!this.running) return this.exited;
    this.child.kill('SIGTERM');
    const late = await Promise.race([this.exited.then(() => false), sleep(graceMs, true, { ref: false })]);
    if (late) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Ends it at once; for the process-exit handler, which cannot wait. */
  killNow(): void {
    if (this.running) this.child.kill('SIGKILL');
  }
}

/** How a process ended, in words. */
export function describeExit(exit: ProcessExit | undefined): string {
  if (exit === undefined) return 'still running';
  return exit.signal !== null ? `ended by ${exit.signal}` : `exit status ${exit.code}`;
}

function tail(text: string, lines = 30): string {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? ['…', ...all.slice(-lines)] : all).join('\n');
}
