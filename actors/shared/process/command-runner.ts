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
  /**
   * When it runs longer, its whole process group is ended: SIGTERM, then SIGKILL after
   * KILL_GRACE_MS.
   */
  timeoutMs?: number;
  input?: string;
  /** Aborting ends the program's process group as a timeout does (without `timedOut`). */
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
/** How long a program's process group has after SIGTERM before it is sent SIGKILL. */
export const KILL_GRACE_MS = 2000;
/**
 * How long the output pipes are still read once the program has exited (or its group was
 * killed): a process it left behind may hold them open for as long as it lives.
 */
export const PIPES_AFTER_EXIT_MS = 500;

// Each program runs in its own process group (spawned detached: a new session, the program its
// leader), so a timeout or an abort can end everything it started, grandchildren and
// `cmd &` alike, by signalling the group (-pid) rather than the one process Node knows of.
//
// The runner waits for the program itself, never for what it leaves behind. Once the program
// has exited (after a timeout: once its group has been sent SIGKILL) the pipes are read for
// PIPES_AFTER_EXIT_MS more and then closed, since a background process, or one that left the
// group with setsid, may hold them open indefinitely; waiting for them held the whole pass,
// and with it everything queued behind it. A program that exits on its own leaves its
// background processes running: what a command starts is the command's effect, as the files it
// writes are, and not the host's to end (the seed's table: an action "left nothing the host
// owns"). Such a process should not write to the pipes once the program has exited: nobody is
// reading them, and its writes fail with EPIPE.

/** The real runner: spawns the program directly (no shell), with bounded output. */
export class ProcessRunner implements CommandRunner {
  run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const started = monotonicMs();
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    return new Promise((resolve) => {
      const [program, ...args] = argv;
      if (program === undefined) throw new TypeError('ProcessRunner.run needs a program to run');
      const env = options.replaceEnv ? { ...options.env } : { ...process.env, ...options.env };
      const child = childProcess().spawn(program, args, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      watchGroup(child.pid);
      const stdout = new BoundedText(max);
      const stderr = new BoundedText(max);
      const timers: NodeJS.Timeout[] = [];
      let timedOut = false;
      let spawnError: string | undefined;
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let ending = false;
      let done = false;

      const finish = (): void => {
        if (done) return;
        done = true;
        unwatchGroup(child.pid);
        for (const timer of timers) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        child.stdout.destroy();
        child.stderr.destroy();
        child.stdin.destroy();
        resolve({
          argv,
          code: spawnError === undefined ? (exited?.code ?? null) : null,
          signal: spawnError === undefined ? (exited?.signal ?? null) : null,
          stdout: stdout.text(),
          stderr: stderr.text(),
          timedOut,
          ...(spawnError === undefined ? {} : { spawnError }),
          durationMs: monotonicMs() - started,
        });
      };
      // The pipes get a last short while once nothing more is waited for, then are let go.
      const stopReadingSoon = (): void => {
        timers.push(setTimeout(finish, PIPES_AFTER_EXIT_MS));
      };
      // TERM to the whole group, then KILL to whatever of it is left after the grace.
      const endGroup = (): void => {
        if (ending || done) return;
        ending = true;
        signalGroup(child.pid, 'SIGTERM');
        timers.push(setTimeout(() => {
          signalGroup(child.pid, 'SIGKILL');
          stopReadingSoon();
        }, KILL_GRACE_MS));
      };
      const onAbort = (): void => endGroup();

      if (options.timeoutMs !== undefined) {
        timers.push(setTimeout(() => {
          if (exited !== undefined) return;
          timedOut = true;
          endGroup();
        }, options.timeoutMs));
      }
      if (options.signal?.aborted) endGroup();
      else options.signal?.addEventListener('abort', onAbort, { once: true });

      child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
      child.on('error', (error) => { spawnError = error.message; });
      child.stdin.on('error', () => undefined); // a program that does not read its input is fine
      child.stdin.end(options.input ?? '');
      child.on('exit', (code, signal) => {
        exited = { code, signal };
        // Ended by the host: the rest of its group still has the grace to go, and the pipes
        // are let go after the KILL. Exited on its own: what it left running is let be.
        if (!ending) stopReadingSoon();
      });
      child.on('close', finish);
    });
  }
}

// A program in a group of its own no longer gets the signal a terminal sends to the host's
// group (Ctrl-C), nor anything sent to the host alone. So while groups run, a signal that would
// end the host ends them first (SIGTERM, whichever it was: a shell's background jobs ignore
// SIGINT), and then ends the host as it would have. A host that handles the signal itself
// (`run` aborts its work, which ends the groups) is left to do so.
const liveGroups = new Set<number>();
const PASSED_ON: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onHostSignal(signal: NodeJS.Signals): void {
  // Listening first, this is the only listener exactly when nobody else handles the signal.
  if (process.listenerCount(signal) > 1) return;
  for (const pid of liveGroups) signalGroup(pid, 'SIGTERM');
  for (const each of PASSED_ON) process.off(each, onHostSignal);
  process.kill(process.pid, signal);
}

function watchGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  if (liveGroups.size === 0) for (const signal of PASSED_ON) process.prependListener(signal, onHostSignal);
  liveGroups.add(pid);
}

function unwatchGroup(pid: number | undefined): void {
  if (pid === undefined || !liveGroups.delete(pid)) return;
  if (liveGroups.size === 0) for (const signal of PASSED_ON) process.off(signal, onHostSignal);
}

/** Sends `signal` to every process in the group led by `pid`; a group already gone is fine. */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
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
