import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerConfig } from './broker-config';
import { BrokerDidNotStart, BrokerNotRunning, BrokerReloadFailed, BrokerReloadUnconfirmed, TlsMaterialMissing } from './broker-errors';
import { probeBrokerTls } from './broker-tls-probe';

/** How to start a broker. */
export interface StartBrokerOptions {
  /** The configuration file nats-server is given. */
  configFile: string;
  /** What that file says (as written by writeBrokerConfig): where to probe, log and pid files. */
  config: BrokerConfig;
  /** The nats-server program; `nats-server` on the PATH unless given. */
  program?: string;
  /** How long it may take to accept TLS connections. */
  readyTimeoutMs?: number;
}

/** How a broker process ended. */
export interface BrokerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How to ask a running broker to read its configuration again. */
export interface ReloadBrokerOptions {
  /** The broker's pid, when known; otherwise read from pidFile. */
  pid?: number;
  pidFile?: string;
  /** The broker's log file: its lines are how a reload is confirmed or refused. */
  logFile: string;
  timeoutMs?: number;
}

const POLL_MS = 10;

/**
 * A nats-server this process started. It runs until stop(); if it ends on its own, `exited`
 * settles and `running` turns false.
 */
export class RunningBroker {
  /** Settles when the process has ended, however it ended. */
  readonly exited: Promise<BrokerExit>;
  private exit: BrokerExit | undefined;

  constructor(
    private readonly child: ChildProcess,
    /** The configuration it was started with. */
    readonly config: BrokerConfig,
    exited: Promise<BrokerExit>,
  ) {
    this.exited = exited.then((exit) => (this.exit = exit));
  }

  /** The server's process id. */
  get pid(): number {
    return this.child.pid as number;
  }

  /** False once the process has ended. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /**
   * Makes the server read its configuration and user list again, and waits for it to say it did
   * (see reloadBroker). A removed user's connections are closed by then.
   */
  async reload(options: { timeoutMs?: number } = {}): Promise<void> {
    if (!this.running) throw new BrokerNotRunning(`the broker started as pid ${this.pid} has exited`);
    await reloadBroker({ pid: this.pid, logFile: this.config.logFile, ...options });
  }

  /** Ends the server: SIGTERM (it closes JetStream cleanly), SIGKILL after `graceMs`. */
  async stop(options: { graceMs?: number } = {}): Promise<BrokerExit> {
    if (!this.running) return this.exited;
    this.child.kill('SIGTERM');
    const grace = sleep(options.graceMs ?? 5000, 'late' as const, { ref: false });
    if ((await Promise.race([this.exited, grace])) === 'late') this.child.kill('SIGKILL');
    return this.exited;
  }
}

/**
 * Starts nats-server on a written configuration and resolves once it accepts TLS connections
 * with the configured certificate (probeBrokerTls), so a caller can connect at once. If it exits
 * first or is not ready in time, rejects with BrokerDidNotStart quoting what the server said
 * (its log's fatal line, or its own output), and leaves no process behind.
 */
export async function startBroker(options: StartBrokerOptions): Promise<RunningBroker> {
  const { config } = options;
  let caPem: string;
  try {
    caPem = await fs.readFile(config.tls.certFile, 'utf8');
  } catch (error) {
    throw new TlsMaterialMissing(config.tls.certFile, error);
  }
  const logStart = await sizeOf(config.logFile);
  const output: string[] = [];
  let spawnError: Error | undefined;

  const child = spawn(options.program ?? 'nats-server', ['-c', options.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer): void => {
    output.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim() !== ''));
    output.splice(0, Math.max(0, output.length - 20));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<BrokerExit>((resolve) => {
    child.once('error', (error) => {
      spawnError = error;
      // A process that never started emits no 'exit'.
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const broker = new RunningBroker(child, config, exited);

  const probeHost = config.listen.host === '0.0.0.0' ? '127.0.0.1' : config.listen.host === '::' ? '::1' : config.listen.host;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
  let lastProbeError = 'not yet probed';
  while (Date.now() < deadline) {
    if (!broker.running) break;
    // Raced with the exit: whatever holds the port when the server could not bind it may
    // accept the probe and say nothing.
    const abandon = new AbortController();
    const probe = probeBrokerTls({ host: probeHost, port: config.listen.port, caPem, timeoutMs: 1000, signal: abandon.signal }).then(
      () => 'ready' as const,
      (error: Error) => error,
    );
    const outcome = await Promise.race([probe, broker.exited.then(() => 'exited' as const)]);
    abandon.abort();
    if (outcome === 'ready') return broker;
    if (outcome instanceof Error) lastProbeError = outcome.message;
    await Promise.race([sleep(20), broker.exited]);
  }

  if (broker.running) {
    await broker.stop({ graceMs: 1000 });
    throw new BrokerDidNotStart(`${await serverSaid(config.logFile, logStart, output) ?? 'no error in its log'}; not accepting TLS on ${probeHost}:${config.listen.port} within ${Math.round((options.readyTimeoutMs ?? 10_000) / 1000)} s (${lastProbeError})`);
  }
  if (spawnError !== undefined) {
    const notInstalled = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
    throw new BrokerDidNotStart(`${options.program ?? 'nats-server'}: ${spawnError.message}`, { notInstalled, cause: spawnError });
  }
  const exit = await broker.exited;
  const status = exit.code === null ? `ended by ${exit.signal}` : `exited ${exit.code}`;
  throw new BrokerDidNotStart(`${await serverSaid(config.logFile, logStart, output) ?? 'it gave no reason'} (nats-server ${status}; log: ${config.logFile})`);
}

/**
 * Makes a running nats-server reload (SIGHUP) and waits until its log says it did. nats-server
 * keeps running on its previous configuration when the new one is refused, so a reload that is
 * not confirmed is not assumed: the log's "Failed to reload" line becomes BrokerReloadFailed,
 * silence becomes BrokerReloadUnconfirmed. Works from any process that may signal the broker,
 * given its pid file (`mesh-control token issue` while `mesh-control broker` runs).
 *
 * Two processes reloading the same broker at the same moment may each see the other's
 * confirmation; the controller serialises changes to the user list, so that does not arise.
 */
export async function reloadBroker(options: ReloadBrokerOptions): Promise<void> {
  const pid = options.pid ?? (await readPid(options.pidFile));
  await checkIsNatsServer(pid, options.pidFile);
  let offset = await sizeOf(options.logFile);
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BrokerNotRunning(code === 'EPERM' ? `not allowed to signal pid ${pid}: run this as the broker's user or root` : `pid ${pid} is not running`);
  }

  const timeoutMs = options.timeoutMs ?? 5000;
  const deadline = Date.now() + timeoutMs;
  let partial = '';
  for (;;) {
    const size = await sizeOf(options.logFile);
    if (size < offset) {
      // The log was rotated since the signal: the answer is in the new file.
      offset = 0;
      partial = '';
    }
    if (size > offset) {
      const text = partial + (await readFrom(options.logFile, offset, size));
      offset = size;
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const owner = /^\[(\d+)\] /.exec(line);
        if (owner && Number(owner[1]) !== pid) continue;
        if (line.includes('Reloaded server configuration')) return;
        const refused = /Failed to reload server configuration: (.*)$/.exec(line);
        if (refused) throw new BrokerReloadFailed(refused[1] as string);
      }
    }
    if (Date.now() >= deadline) throw new BrokerReloadUnconfirmed(options.logFile, Math.round(timeoutMs / 1000));
    await sleep(POLL_MS);
  }
}

async function readPid(pidFile: string | undefined): Promise<number> {
  if (pidFile === undefined) throw new TypeError('reloadBroker needs a pid or a pid file');
  let text: string;
  try {
    text = await fs.readFile(pidFile, 'utf8');
  } catch {
    throw new BrokerNotRunning(`there is no pid file at ${pidFile}`);
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid < 2) throw new BrokerNotRunning(`the pid file ${pidFile} holds no process id`);
  return pid;
}

// A pid file outlives a crash, and its number may since belong to another program: signalling
// that one (SIGHUP ends most programs) would be worse than refusing.
async function checkIsNatsServer(pid: number, pidFile: string | undefined): Promise<void> {
  const from = pidFile === undefined ? '' : ` (from ${pidFile})`;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') throw new BrokerNotRunning(`pid ${pid}${from} is not running`);
  }
  let name: string;
  try {
    name = (await fs.readFile(`/proc/${pid}/comm`, 'utf8')).trim();
  } catch {
    return; // no /proc here: the checks above are all there is
  }
  if (!name.startsWith('nats-server')) throw new BrokerNotRunning(`pid ${pid}${from} is ${name}, not nats-server: the pid file is stale`);
}

/** The server's own words about why it failed: its log's last fatal or error line, else its output. */
async function serverSaid(logFile: string, from: number, output: readonly string[]): Promise<string | undefined> {
  const size = await sizeOf(logFile);
  const log = size > from ? (await readFrom(logFile, from, size)).split('\n') : [];
  const complaint = [...log].reverse().find((line) => / \[(FTL|ERR)\] /.test(line));
  if (complaint) return complaint.replace(/^.*? \[(FTL|ERR)\] /, '');
  return output.at(-1)?.trim();
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return 0;
  }
}

async function readFrom(file: string, start: number, end: number): Promise<string> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(end - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
