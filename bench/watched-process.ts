import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a watched process ended. */
export interface WatchedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Every watched process still running, ended when the benchmark exits however it exits. */
const running = new Set<ChildProcess>();
let exitHandlerInstalled = false;

/**
 * A process started for a measurement, its output (both streams, in order) kept, with the
 * moment a line appears taken from the data event itself rather than from polling, so a
 * start-to-line time is as sharp as the event loop.
 */
export class WatchedProcess {
  readonly child: ChildProcess;
  /** `performance.now()` when it was spawned. */
  readonly startedAt: number;
  readonly exited: Promise<WatchedExit>;
  private text = '';
  private ended = false;
  private readonly listeners = new Set<() => void>();

  constructor(argv: readonly [string, ...string[]], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
    const [program, ...args] = argv;
    this.startedAt = performance.now();
    this.child = spawn(program, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(this.child);
    installExitHandler();
    const take = (chunk: Buffer): void => {
      this.text += chunk.toString('utf8');
      for (const listener of [...this.listeners]) listener();
    };
    this.child.stdout?.on('data', take);
    this.child.stderr?.on('data', take);
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.ended = true;
        running.delete(this.child);
        for (const listener of [...this.listeners]) listener();
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        this.text += `\n(could not start: ${error.message})\n`;
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Everything it printed, from character `from` on. */
  output(from = 0): string {
    return this.text.slice(from);
  }

  /**
   * Resolves with `performance.now()` at the moment its output from `from` on first matches
   * `pattern`. Rejects, quoting what it printed, when it ends first or `timeoutMs` passes.
   */
  waitFor(pattern: RegExp, options: { from?: number; timeoutMs?: number } = {}): Promise<number> {
    const from = options.from ?? 0;
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      const check = (): void => {
        if (pattern.test(this.output(from))) {
          finish();
          resolve(performance.now());
        } else if (this.ended) {
          finish();
          reject(new Error(`${this.describe()} ended without printing ${pattern}; it printed:\n${tail(this.output())}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${this.describe()} did not print ${pattern} within ${timeoutMs} ms; it printed:\n${tail(this.output())}`));
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has ended. */
  async stop(graceMs = 10_000): Promise<WatchedExit> {
    if (!this.ended) {
      this.child.kill('SIGTERM');
      const late = await Promise.race([this.exited.then(() => false), sleep(graceMs, true, { ref: false })]);
      if (late) this.child.kill('SIGKILL');
    }
    return this.exited;
  }

  private describe(): string {
    return this.child.spawnargs.slice(1, 3).join(' ');
  }
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

function tail(text: string, lines = 20): string {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? ['…', ...all.slice(-lines)] : all).join('\n');
}
