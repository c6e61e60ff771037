import { promises as fs, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { InitMeshResult } from '../actors/controller/config/init-mesh';
import type { NodeListing } from '../actors/controller/nodes/list-nodes';
import type { IssuedToken } from '../actors/controller/tokens/issue-enrolment-token';
import type { Enrolled } from '../actors/host/enrolment/enrol';
import type { Owned } from '../schema/owned';
import { describeExit, RigProcess, type ProcessExit } from './rig-process';
import { jsonOf, runCli, succeeded, type CliResult } from './run-cli';
import { done, NeverComing, notYet, until } from './until';

/** The checkout: where bin/ is. */
export const REPO_DIR = path.resolve(__dirname, '..');
const MESH_CONTROL = path.join(REPO_DIR, 'bin', 'mesh-control');
const NOX_MESH_HOST = path.join(REPO_DIR, 'bin', 'nox-mesh-host');

/** What the rig is asked to raise. */
export interface MeshRigOptions {
  /** Where everything goes: mesh/, hosts/<name>/, logs/, declarations/. Made if missing. */
  dir: string;
  /** The machines, by name: each gets a root hosts/<name> whose etc/hostname says that name. */
  hosts: readonly string[];
  /** A postgres:// URL for the controller's store; the embedded store (PGlite) unless given. */
  database?: string;
  /** The broker's port on 127.0.0.1; a free one unless given. */
  brokerPort?: number;
  /** Hears a line for each step, for a person watching. */
  say?: (line: string) => void;
  /** Variables added to the environment of the long-running processes (serve, the hosts): timings for tests. */
  env?: Readonly<Record<string, string>>;
  /** Arguments added to `mesh-control serve` (`--log-format json`, `--metrics-listen …`). */
  serveArgs?: readonly string[];
  /**
   * The address the broker listens on and hosts dial, instead of 127.0.0.1: a bridge's address
   * when the hosts run in network namespaces of their own.
   */
  brokerHost?: string;
  /**
   * A command that machine `name`'s host processes (`run` and every verb) are started under,
   * like `nsenter -t PID -m -n`, so each runs in the machine's own namespaces.
   */
  hostPrefix?: (name: string) => readonly string[];
}

/** Processes started by rigs in this process, ended when it exits however it exits. */
const everyRig = new Set<MeshRig>();
let exitHandlerInstalled = false;

/**
 * A one-machine mesh made of the real processes, started the way a person starts them:
 * `mesh-control init`, `mesh-control broker`, `mesh-control serve`, and one `nox-mesh-host run`
 * per machine, each machine a directory standing in for its root. Verbs run as their own
 * processes from bin/. Every process the rig starts is ended by stop(), and, should the caller
 * never get there, when this process exits.
 */
export class MeshRig {
  /** Where everything is. */
  readonly dir: string;
  /** The mesh directory: `--dir` of every mesh-control verb. */
  readonly meshDir: string;
  /** Where each process's output is written. */
  readonly logDir: string;
  /** The machines' names. */
  readonly hosts: readonly string[];
  /** What `mesh-control init --json` printed. */
  init: InitMeshResult | undefined;
  /** `mesh-control broker`, once started. */
  broker: RigProcess | undefined;
  /** `mesh-control serve`, once started. */
  serve: RigProcess | undefined;
  private readonly options: MeshRigOptions;
  private readonly runs = new Map<string, RigProcess>();
  private readonly started: RigProcess[] = [];
  private stopped = false;
  /** nats-server itself, started by `mesh-control broker`: ended too should that have been killed. */
  private natsPid: number | undefined;

  /** Makes the rig; nothing runs until start(). Keep it where afterAll can reach it, then start it. */
  constructor(options: MeshRigOptions) {
    this.options = options;
    this.dir = path.resolve(options.dir);
    this.meshDir = path.join(this.dir, 'mesh');
    this.logDir = path.join(this.dir, 'logs');
    this.hosts = [...options.hosts];
    everyRig.add(this);
    installExitHandler();
  }

  /**
   * Raises the mesh: init, broker, controller, and every machine's host running, not yet
   * enrolled. If a step fails, whatever was started is stopped before the error is thrown.
   */
  async start(): Promise<this> {
    try {
      await this.raise();
      return this;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  private async raise(): Promise<void> {
    const say = this.options.say ?? (() => undefined);
    await fs.mkdir(this.logDir, { recursive: true });
    const port = this.options.brokerPort ?? (await freePort());

    say(`making the mesh in ${this.meshDir}: keys, the broker's TLS certificate and configuration, the ${this.options.database === undefined ? 'embedded store (PGlite)' : 'PostgreSQL store'}`);
    const brokerHost = this.options.brokerHost ?? '127.0.0.1';
    this.init = jsonOf<InitMeshResult>(await this.control([
      'init', '--broker-url', `tls://${brokerHost}:${port}`,
      ...(this.options.brokerHost === undefined ? [] : ['--listen', `${brokerHost}:${port}`]),
      ...(this.options.database === undefined ? [] : ['--database', this.options.database]),
      '--json',
    ], { timeoutMs: 120_000 }));

    say(`starting the broker (nats-server with TLS and JetStream) on ${this.init.broker.url}`);
    this.broker = this.spawn('broker', [MESH_CONTROL, 'broker', '--dir', this.meshDir], 'broker.log');
    const running = await this.broker.waitFor(/broker running \(nats-server pid (\d+)\)/, { timeoutMs: 30_000 });
    this.natsPid = Number(running[1]);

    say('starting the controller (mesh-control serve)');
    await this.startServe('serve.log');

    say(`starting ${this.hosts.length} hosts (nox-mesh-host run), each in its own root under ${path.join(this.dir, 'hosts')}`);
    await Promise.all(this.hosts.map(async (name) => {
      const root = this.hostRoot(name);
      await fs.mkdir(path.join(root, 'etc'), { recursive: true });
      await fs.writeFile(path.join(root, 'etc', 'hostname'), `${name}\n`);
      await this.startHost(name);
    }));
  }

  /** Stops `mesh-control serve` with SIGTERM and starts it again, waiting until it answers a verb. */
  async restartServe(): Promise<void> {
    await this.serve?.stop();
    await this.startServe(`serve-${this.started.length}.log`);
  }

  private async startServe(logName: string): Promise<void> {
    const serve = this.spawn('serve', [MESH_CONTROL, 'serve', '--dir', this.meshDir, ...(this.options.serveArgs ?? [])], logName);
    this.serve = serve;
    // Ready is when it answers a verb, whatever it prints on the way.
    await until('the controller to answer `mesh-control nodes`', async () => {
      if (!serve.running) throw new NeverComing(`mesh-control serve ended (${describeExit(await serve.exited)}); it printed:\n${serve.output()}`);
      const answer = await this.control(['nodes', '--json']);
      return answer.code === 0 ? done(true) : notYet(`mesh-control nodes said:\n${answer.stderr}${answer.stdout}\nmesh-control serve printed:\n${serve.output()}`);
    }, { timeoutMs: 60_000, intervalMs: 200 });
  }

  /** The directory standing in for machine `name`'s root. */
  hostRoot(name: string): string {
    return path.join(this.dir, 'hosts', name);
  }

  /** Machine `name`'s host state directory (the default under its root). */
  hostStateDir(name: string): string {
    return path.join(this.hostRoot(name), 'var', 'lib', 'mesh-host');
  }

  /** The running `nox-mesh-host run` of machine `name`. */
  host(name: string): RigProcess {
    const run = this.runs.get(name);
    if (run === undefined) throw new Error(`the rig has no host named ${JSON.stringify(name)} running; it has: ${[...this.runs.keys()].join(', ')}`);
    return run;
  }

  /** Starts `nox-mesh-host run` on machine `name`, and waits until it says what it is (hosted or enrolled). */
  async startHost(name: string): Promise<RigProcess> {
    if (this.runs.get(name)?.running === true) throw new Error(`the host of ${name} is running already`);
    const run = this.spawn(`host ${name}`, [NOX_MESH_HOST, 'run', '--root', this.hostRoot(name)], `host-${name}.log`, this.options.hostPrefix?.(name));
    this.runs.set(name, run);
    await run.waitFor(/^(hosted: |enrolled as node )/m, { timeoutMs: 30_000 });
    return run;
  }

  /** Stops machine `name`'s host with SIGTERM, as its service manager would. */
  async stopHost(name: string): Promise<ProcessExit> {
    return this.host(name).stop();
  }

  /** Runs a `mesh-control` verb on this mesh (`--dir` is added). */
  control(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<CliResult> {
    return runCli([process.execPath, MESH_CONTROL, ...args, '--dir', this.meshDir], {
      cwd: REPO_DIR,
      label: `mesh-control ${args.join(' ')}`,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  }

  /** Runs a `nox-mesh-host` verb on machine `name` (`--root` is added). */
  hostCli(name: string, args: readonly string[]): Promise<CliResult> {
    return runCli(prefixed(this.options.hostPrefix?.(name) ?? [], [process.execPath, NOX_MESH_HOST, ...args, '--root', this.hostRoot(name)]), {
      cwd: REPO_DIR,
      label: `nox-mesh-host ${args.join(' ')} (on ${name})`,
    });
  }

  /** `mesh-control token issue --new` or `--node NAME`: a fresh one-time token. */
  async issueToken(target: { new: true } | { node: string }): Promise<IssuedToken> {
    const args = 'node' in target ? ['--node', target.node] : ['--new'];
    return jsonOf<IssuedToken>(await this.control(['token', 'issue', ...args, '--json']));
  }

  /** `nox-mesh-host enrol --token T` on machine `name`. */
  async enrol(name: string, token: string): Promise<Enrolled> {
    return jsonOf<Enrolled>(await this.hostCli(name, ['enrol', '--token', token, '--json']));
  }

  /** `mesh-control node declare NODE FILE`. */
  async declare(node: string, file: string): Promise<CliResult> {
    return succeeded(await this.control(['node', 'declare', node, file]));
  }

  /** `mesh-control nodes --json`: every node record. */
  async nodes(): Promise<NodeListing[]> {
    return jsonOf<{ nodes: NodeListing[] }>(await this.control(['nodes', '--json'])).nodes;
  }

  /** `nox-mesh-host owned --json` on machine `name`. */
  async owned(name: string): Promise<Owned> {
    return jsonOf<Owned>(await this.hostCli(name, ['owned', '--json']));
  }

  /**
   * Stops `mesh-control broker` and starts it again on the same configuration, as a restart of
   * its service would: every connection to it drops, and each client must connect again.
   */
  async restartBroker(): Promise<void> {
    await this.broker?.stop();
    this.broker = this.spawn('broker', [MESH_CONTROL, 'broker', '--dir', this.meshDir], `broker-${this.started.length}.log`);
    const running = await this.broker.waitFor(/broker running \(nats-server pid (\d+)\)/, { timeoutMs: 30_000 });
    this.natsPid = Number(running[1]);
  }

  /**
   * Stops everything it started, hosts first, then the controller, then the broker, each with
   * SIGTERM and SIGKILL after a grace period, and returns how each ended. Safe to call more than
   * once, and after a start that failed half way. Leaves the files: the caller decides whether
   * they go.
   */
  async stop(): Promise<Array<{ label: string; exit: ProcessExit }>> {
    this.stopped = true;
    await Promise.all([...this.runs.values()].map((run) => run.stop()));
    await this.serve?.stop();
    await this.broker?.stop();
    const ended = await Promise.all(this.started.map(async (started) => ({ label: started.label, exit: await started.stop() })));
    this.killNats();
    everyRig.delete(this);
    return ended;
  }

  private spawn(label: string, argv: readonly string[], logName: string, prefix: readonly string[] = []): RigProcess {
    // A start still under way when stop() was called must not leave a process behind.
    if (this.stopped) throw new Error(`the rig in ${this.dir} was stopped; not starting ${label}`);
    const started = new RigProcess({
      label, argv: prefixed(prefix, [process.execPath, ...argv]), cwd: REPO_DIR, logFile: path.join(this.logDir, logName),
      ...(this.options.env === undefined ? {} : { env: this.options.env }),
    });
    this.started.push(started);
    return started;
  }

  /** Ends every process at once; for the exit handler. */
  killNow(): void {
    for (const started of this.started) started.killNow();
    this.killNats();
  }

  private killNats(): void {
    const pid = this.natsPid;
    this.natsPid = undefined;
    // Only the very process that was started on this mesh's configuration: once it has gone
    // (as it has when `mesh-control broker` stopped it), its pid may belong to anyone.
    if (pid === undefined || !commandLineOf(pid).includes(this.meshDir)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended between the look and the kill.
    }
  }
}

function prefixed(prefix: readonly string[], argv: readonly [string, ...string[]]): [string, ...string[]] {
  const [first, ...rest] = prefix;
  return first === undefined ? [...argv] : [first, ...rest, ...argv];
}

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const rig of everyRig) rig.killNow();
  });
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
