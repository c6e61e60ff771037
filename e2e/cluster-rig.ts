import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import type { InitMeshResult } from '../actors/controller/config/init-mesh';
import type { NodeListing } from '../actors/controller/nodes/list-nodes';
import type { IssuedToken } from '../actors/controller/tokens/issue-enrolment-token';
import { startFreezeProxy, type FreezeProxy } from '../actors/shared/testing/freeze-proxy';
import { startTestPostgres, type TestPostgres } from '../actors/shared/testing/test-postgres';
import { freePort, REPO_DIR } from './mesh-rig';
import { describeExit, RigProcess } from './rig-process';
import { jsonOf, runCli, succeeded, type CliResult } from './run-cli';
import { done, NeverComing, notYet, until } from './until';

const MESH_CONTROL = path.join(REPO_DIR, 'bin', 'mesh-control');
const NOX_MESH_HOST = path.join(REPO_DIR, 'bin', 'nox-mesh-host');

/** What the cluster rig raises. */
export interface ClusterRigOptions {
  dir: string;
  /** How many nats-servers (default 3). */
  servers?: number;
  /** How many `mesh-control serve` (default 2). */
  controllers?: number;
  hosts: readonly string[];
  say?: (line: string) => void;
  /**
   * Each server after the first reads an auth.conf of its own (a copy, not the link to the
   * mesh's), as it would on a machine of its own, and `mesh-control broker sync --server NAME`
   * runs for every server (startSync). The first server stands for the controllers' machine.
   */
  ownUserLists?: boolean;
  /** Added to the environment of the long-running processes. */
  env?: Readonly<Record<string, string>>;
}

/** A server of the rig's cluster: its `mesh-control broker --server` process and nats-server's pid. */
interface RigServer {
  name: string;
  url: string;
  process: RigProcess | undefined;
  natsPid: number | undefined;
}

/**
 * A mesh on several machines' worth of real processes, all on loopback: a real PostgreSQL
 * behind a TCP proxy the rig owns (so the store's connection can be cut), `mesh-control init`
 * on it, `mesh-control broker cluster` and one `mesh-control broker --server NAME` per server,
 * several `mesh-control serve` (one acts by the lease), and one `nox-mesh-host run` per machine.
 * Everything it starts it ends in stop(), and on the way out of the process otherwise.
 */
export class ClusterRig {
  readonly dir: string;
  readonly meshDir: string;
  readonly logDir: string;
  readonly hosts: readonly string[];
  postgres: TestPostgres | undefined;
  /** The proxy in front of PostgreSQL every controller goes through. */
  storeProxy: FreezeProxy | undefined;
  init: InitMeshResult | undefined;
  readonly servers: RigServer[] = [];
  readonly controllers: Array<RigProcess | undefined> = [];
  /** Each server's `mesh-control broker sync`, by server name, while it runs. */
  readonly syncs = new Map<string, RigProcess>();
  private readonly runs = new Map<string, RigProcess>();
  private readonly started: RigProcess[] = [];
  private readonly options: ClusterRigOptions;
  private stopped = false;
  private count = 0;

  constructor(options: ClusterRigOptions) {
    this.options = options;
    this.dir = path.resolve(options.dir);
    this.meshDir = path.join(this.dir, 'mesh');
    this.logDir = path.join(this.dir, 'logs');
    this.hosts = [...options.hosts];
    everyRig.add(this);
    installExitHandler();
  }

  /** Raises everything; stops what it started when a step fails. */
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
    say('starting PostgreSQL, and the proxy the controllers reach it through');
    this.postgres = await startTestPostgres();
    this.storeProxy = await startFreezeProxy({ port: this.postgres.port });
    const database = this.postgres.url.replace(`:${this.postgres.port}/`, `:${this.storeProxy.port}/`);

    const size = this.options.servers ?? 3;
    const ports: Array<{ client: number; route: number }> = [];
    for (let index = 0; index < size; index += 1) ports.push({ client: await freePort(), route: await freePort() });
    this.init = jsonOf<InitMeshResult>(await this.control(['init', '--broker-url', `tls://127.0.0.1:${ports[0]!.client}`, '--database', database, '--json'], { timeoutMs: 120_000 }));
    say(`writing a cluster of ${size} servers`);
    succeeded(await this.control(['broker', 'cluster', ...ports.flatMap((port, index) => ['--server', `s${index + 1}=127.0.0.1:${port.client}:${port.route}`]), '--json']));
    for (let index = 0; index < size; index += 1) {
      this.servers.push({ name: `s${index + 1}`, url: `tls://127.0.0.1:${ports[index]!.client}`, process: undefined, natsPid: undefined });
    }
    if (this.options.ownUserLists === true) {
      for (const server of this.servers.slice(1)) {
        const authFile = path.join(this.meshDir, 'broker', 'cluster', server.name, 'auth.conf');
        const content = await fs.readFile(authFile, 'utf8');
        await fs.rm(authFile);
        await fs.writeFile(authFile, content, { mode: 0o600 });
      }
    }
    await Promise.all(this.servers.map((server) => this.startServer(server.name)));
    if (this.options.ownUserLists === true) for (const server of this.servers) await this.startSync(server.name);

    const controllers = this.options.controllers ?? 2;
    say(`starting ${controllers} controllers (mesh-control serve)`);
    for (let index = 0; index < controllers; index += 1) this.controllers.push(undefined);
    for (let index = 0; index < controllers; index += 1) await this.startController(index);
    await until('a controller to answer `mesh-control nodes`', async () => {
      const answer = await this.control(['nodes', '--json']);
      return answer.code === 0 ? done(true) : notYet(`${answer.stderr}${answer.stdout}\n${this.controllers.map((each) => each?.output() ?? '').join('\n---\n')}`);
    }, { timeoutMs: 90_000, intervalMs: 500 });

    say(`starting ${this.hosts.length} hosts (nox-mesh-host run)`);
    for (const name of this.hosts) {
      const root = this.hostRoot(name);
      await fs.mkdir(path.join(root, 'etc'), { recursive: true });
      await fs.writeFile(path.join(root, 'etc', 'hostname'), `${name}\n`);
    }
    // A few at a time: each loads the host from TypeScript sources on two shared cores.
    for (let index = 0; index < this.hosts.length; index += 4) {
      await Promise.all(this.hosts.slice(index, index + 4).map((name) => this.startHost(name)));
    }
  }

  /** Starts `mesh-control broker --server NAME` and waits until its nats-server accepts TLS. */
  async startServer(name: string): Promise<void> {
    const server = this.serverNamed(name);
    if (server.process?.running === true) return;
    const process = this.spawn(`broker ${name}`, [MESH_CONTROL, 'broker', '--dir', this.meshDir, '--server', name], `broker-${name}-${++this.count}.log`);
    server.process = process;
    const running = await process.waitFor(/broker running \(nats-server pid (\d+)\)/, { timeoutMs: 60_000 });
    server.natsPid = Number(running[1]);
  }

  /** Starts `mesh-control broker sync --server NAME` and waits until it reads the bucket. */
  async startSync(name: string): Promise<RigProcess> {
    const sync = this.spawn(`sync ${name}`, [MESH_CONTROL, 'broker', 'sync', '--dir', this.meshDir, '--server', name, '--interval-ms', '500'], `sync-${name}-${++this.count}.log`);
    this.syncs.set(name, sync);
    await sync.waitFor(/broker sync running for server/, { timeoutMs: 60_000 });
    return sync;
  }

  /** Stops the sync of server `name` (SIGTERM). */
  async stopSync(name: string): Promise<void> {
    await this.syncs.get(name)?.stop();
    this.syncs.delete(name);
  }

  /** `kill -9` the nats-server of `name` (its `mesh-control broker` then ends, as a unit's main process would). */
  async killServer(name: string): Promise<void> {
    const server = this.serverNamed(name);
    if (server.natsPid !== undefined && commandLineOf(server.natsPid).includes(this.meshDir)) process.kill(server.natsPid, 'SIGKILL');
    server.natsPid = undefined;
    await server.process?.exited;
    server.process = undefined;
  }

  /** Starts controller `index` (`mesh-control serve`). */
  async startController(index: number): Promise<RigProcess> {
    const serve = this.spawn(`serve ${index}`, [MESH_CONTROL, 'serve', '--dir', this.meshDir], `serve-${index}-${++this.count}.log`);
    this.controllers[index] = serve;
    return serve;
  }

  /** The index of the controller acting now, by the lease holder `mesh-control status` names. */
  async actingController(): Promise<number> {
    return until('a controller to act', async () => {
      const answer = await this.control(['status', '--json']);
      if (answer.code !== 0) return notYet(`${answer.stderr}${answer.stdout}`);
      const holder = (JSON.parse(answer.stdout) as { lease?: { holder?: string | null } }).lease?.holder ?? undefined;
      const index = this.controllers.findIndex((serve) => serve?.running === true && holder?.endsWith(`:${serve.pid}`) === true);
      return index >= 0 ? done(index) : notYet(`the lease holder is ${holder ?? 'nobody'}`);
    }, { timeoutMs: 60_000, intervalMs: 300 });
  }

  /** `kill -9` controller `index`. */
  async killController(index: number): Promise<void> {
    const serve = this.controllers[index];
    serve?.signal('SIGKILL');
    await serve?.exited;
  }

  /** Closes every connection to PostgreSQL and refuses new ones for `ms`, then lets them through again. */
  async cutStore(ms: number): Promise<void> {
    const proxy = this.storeProxy;
    if (proxy === undefined) return;
    proxy.admit('refuse');
    proxy.cut();
    await new Promise((resolve) => setTimeout(resolve, ms));
    proxy.admit('forward');
  }

  hostRoot(name: string): string {
    return path.join(this.dir, 'hosts', name);
  }

  host(name: string): RigProcess {
    const run = this.runs.get(name);
    if (run === undefined) throw new Error(`no host ${name}`);
    return run;
  }

  async startHost(name: string): Promise<RigProcess> {
    const run = this.spawn(`host ${name}`, [NOX_MESH_HOST, 'run', '--root', this.hostRoot(name)], `host-${name}.log`);
    this.runs.set(name, run);
    await run.waitFor(/^(hosted: |enrolled as node )/m, { timeoutMs: 60_000 });
    return run;
  }

  control(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<CliResult> {
    return runCli([process.execPath, MESH_CONTROL, ...args, '--dir', this.meshDir], { cwd: REPO_DIR, label: `mesh-control ${args.join(' ')}`, timeoutMs: options.timeoutMs ?? 60_000 });
  }

  hostCli(name: string, args: readonly string[]): Promise<CliResult> {
    return runCli([process.execPath, NOX_MESH_HOST, ...args, '--root', this.hostRoot(name)], { cwd: REPO_DIR, label: `nox-mesh-host ${args.join(' ')} (on ${name})`, timeoutMs: 60_000 });
  }

  async issueToken(): Promise<IssuedToken> {
    return jsonOf<IssuedToken>(await this.control(['token', 'issue', '--new', '--json']));
  }

  async nodes(): Promise<NodeListing[]> {
    return jsonOf<{ nodes: NodeListing[] }>(await this.control(['nodes', '--json'])).nodes;
  }

  /** Stops everything: hosts, controllers, servers (SIGTERM, then SIGKILL), then the proxy and PostgreSQL. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.runs.values()].map((run) => run.stop()));
    await Promise.all(this.controllers.map((serve) => serve?.stop()));
    await Promise.all([...this.syncs.values()].map((sync) => sync.stop()));
    await Promise.all(this.servers.map((server) => server.process?.stop()));
    await Promise.all(this.started.map((started) => started.stop()));
    this.killNats();
    await this.storeProxy?.close();
    await this.postgres?.stop();
    everyRig.delete(this);
  }

  private serverNamed(name: string): RigServer {
    const server = this.servers.find((each) => each.name === name);
    if (server === undefined) throw new Error(`no server ${name}`);
    return server;
  }

  private spawn(label: string, argv: readonly string[], logName: string): RigProcess {
    if (this.stopped) throw new Error(`the rig in ${this.dir} was stopped; not starting ${label}`);
    const started = new RigProcess({
      label, argv: [process.execPath, ...argv], cwd: REPO_DIR, logFile: path.join(this.logDir, logName),
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
    for (const server of this.servers) {
      const pid = server.natsPid;
      server.natsPid = undefined;
      // Only the process started on this mesh's configuration: once gone, its pid may be anyone's.
      if (pid === undefined || !commandLineOf(pid).includes(this.meshDir)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Ended between the look and the kill.
      }
    }
  }
}

const everyRig = new Set<ClusterRig>();
let exitHandlerInstalled = false;

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

export { describeExit, NeverComing };
