import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostState } from '../../schema/host-state';
import { SHAPES_FOR_HOST_KIND } from '../../schema/resource';
import { createAdopter } from '../../actors/host/adoption/adoption.actor';
import type { Applier } from '../../actors/host/appliers/applier';
import { appliersForProfile } from '../../actors/host/appliers/appliers-for-profile';
import { DEFAULT_SETTINGS, type HostSettings } from '../../actors/host/host-context';
import { detectProfile } from '../../actors/host/profile/detect-profile';
import type { ApplierSet } from '../../actors/host/reconcile/applier-set';
import type { HostTimings } from '../../actors/host/run/host-timings';
import { readHostStatus } from '../../actors/host/run/host-status';
import type { RouseSource } from '../../actors/host/run/rouse-signal';
import { runHost } from '../../actors/host/run/run-host';
import { HostStore } from '../../actors/host/store/host-store';
import { callController } from '../../actors/controller/control/call-controller';
import { ControlBrokerUnreachable, ControllerDidNotAnswer } from '../../actors/controller/control/control-errors';
import type { NodeListing } from '../../actors/controller/nodes/list-nodes';
import { serveController, type ServingController } from '../../actors/controller/serve/serve-controller';
import { startTestMesh, type TestMesh } from '../../actors/controller/serve/testing/test-mesh';
import { DEFAULT_TOKEN_TTL_MS } from '../../actors/controller/tokens/parse-ttl';
import { sweepExpiredTokens } from '../../actors/controller/tokens/sweep-expired-tokens';
import { ready } from '../../actors/shared/crypto/sodium';
import { ProcessRunner } from '../../actors/shared/process/command-runner';
import { startTestPostgres, type TestPostgres } from '../../actors/shared/testing/test-postgres';

const REPOSITORY = path.resolve(__dirname, '..', '..');
const HOST_PROGRAM = path.join(REPOSITORY, 'bin', 'nox-mesh-host');
const CONTROL_PROGRAM = path.join(REPOSITORY, 'bin', 'mesh-control');

/**
 * The rig's hosts reconcile this often. It is how long a failed release waits before the host
 * tries again (its next pass), so it stands for the lifecycle's `releaseRetryDelay`; short, so a
 * path does not wait ten minutes, and long enough that a state can be looked at between passes
 * on a loaded machine (at 1 s, a pass held at the gate before a state was looked at failed a
 * run of the suite on a busy machine).
 */
export const RIG_DRIFT_MS = 2000;

/** The rig's hosts send a heartbeat this often while linked, so the controller hears them at once. */
export const RIG_HEARTBEAT_MS = 250;

// The drift and heartbeat periods above, and short waits between attempts to reach the broker,
// so a link given back is taken at once.
const RIG_TIMINGS: HostTimings = {
  driftIntervalMs: RIG_DRIFT_MS,
  heartbeatMs: RIG_HEARTBEAT_MS,
  backoff: { firstMs: 100, capMs: 400 },
};

// Nothing rouses the rig's hosts: a rouse would go to SIGUSR1 of the test process otherwise.
const NO_ROUSES: RouseSource = { listen: () => () => undefined };

/** How long any wait for the real system lasts before it fails, naming what it waited for. */
export const PATIENCE_MS = 10_000;

/** What the overlay declaration writes on every node: the files a release must remove. */
export const OVERLAY_FILES = ['/etc/wireguard/mesh0.conf', '/etc/mesh/hosts'] as const;

/** The overlay file a person replaces with a directory of their own, so its removal fails. */
export const OBSTRUCTED_FILE = '/etc/mesh/hosts';

/** A program run to its end. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How a refused enrolment ended, as `nox-mesh-host enrol --json` printed it. */
export interface EnrolRefusal {
  condition: string;
  retryable: boolean;
}

/** A node's record as the controller keeps it: what the model tests read besides `nodes`. */
export interface NodeRecord {
  lifecycle_state: string;
  nkey: string | null;
  last_seen_at: Date | null;
  release_generation: string | number | null;
  release_held: string | null;
}

/**
 * One mesh for a whole test file: a real PostgreSQL, a mesh directory made by `initMesh` with its
 * nats-server running (TLS, JetStream, nkey users), and the real controller serving it in this
 * process with every part (`serveController`, as `mesh-control serve` runs it). Its clock can be
 * moved forward, which is how a token expires without waiting a quarter of an hour.
 *
 * What a person does at the controller goes through the real CLI (`mesh-control token issue`,
 * `mesh-control node release`); what the tests read comes from its store and its `nodes.list`.
 */
export class LifecycleMesh {
  /** The controller's log lines, in order. */
  readonly logs: string[] = [];
  private offsetMs = 0;
  private serving: ServingController | undefined;

  private constructor(
    private readonly postgres: TestPostgres,
    private readonly mesh: TestMesh,
  ) {}

  /** Starts PostgreSQL, the broker and the controller. */
  static async start(): Promise<LifecycleMesh> {
    await ready();
    const postgres = await startTestPostgres();
    let mesh: TestMesh | undefined;
    try {
      mesh = await startTestMesh({ database: postgres.url });
      const started = new LifecycleMesh(postgres, mesh);
      started.serving = await serveController(mesh.dir, {
        log: (line) => started.logs.push(line),
        now: () => new Date(Date.now() + started.offsetMs),
      });
      return started;
    } catch (error) {
      await mesh?.stop();
      await postgres.stop();
      throw error;
    }
  }

  /** The mesh directory `mesh-control --dir` is given. */
  get dir(): string {
    return this.mesh.dir;
  }

  /** The broker address every token pins. */
  get brokerUrl(): string {
    return this.mesh.config.broker.url;
  }

  /** The broker certificate's fingerprint every token pins. */
  get brokerFingerprint(): string {
    return this.mesh.config.broker.fingerprint;
  }

  /** The controller's signing key every token pins. */
  get controllerKey(): string {
    return this.mesh.config.controller.public_key;
  }

  private get controller(): ServingController {
    if (this.serving === undefined) throw new Error('the controller is not serving');
    return this.serving;
  }

  /** `mesh-control token issue --new`: a token for a machine the mesh has not seen. */
  async issueToken(): Promise<{ token: string; tokenId: string }> {
    const issued = await runProgram(CONTROL_PROGRAM, ['token', 'issue', '--new', '--dir', this.dir, '--json']);
    if (issued.code !== 0) throw new Error(`mesh-control token issue failed (${issued.code}):\n${issued.stdout}${issued.stderr}`);
    const result = JSON.parse(issued.stdout) as { token: string; token_id: string };
    return { token: result.token, tokenId: result.token_id };
  }

  /** `mesh-control node release NAME`: the controller sends the node a final declaration. */
  async release(node: string): Promise<void> {
    const released = await runProgram(CONTROL_PROGRAM, ['node', 'release', node, '--dir', this.dir, '--json']);
    if (released.code !== 0) throw new Error(`mesh-control node release ${node} failed (${released.code}):\n${released.stdout}${released.stderr}`);
    const outcome = JSON.parse(released.stdout) as { released: boolean };
    if (outcome.released) throw new Error(`mesh-control node release ${node} released it at once: the node held no identity`);
  }

  /**
   * A quarter of an hour and a minute pass at the controller, so every token issued so far has
   * expired, and its expiry sweep runs, as it does every 30 s: the tokens' broker users go.
   */
  async letTokensExpire(): Promise<void> {
    this.offsetMs += DEFAULT_TOKEN_TTL_MS + 60_000;
    await sweepExpiredTokens(this.controller.ctx, this.controller.ctx.now());
  }

  /** The node as `mesh-control nodes` lists it, or undefined when it is not listed. */
  async listed(node: string): Promise<NodeListing | undefined> {
    const answer = await callController(this.dir, 'nodes.list', {});
    return (answer.result as { nodes: NodeListing[] }).nodes.find((listing) => listing.name === node);
  }

  /**
   * {@link listed}, for a wait: a call the broker or the controller did not answer in time (a
   * loaded machine: the NATS handshake is bounded at 5 s) is "not yet", and the wait's own
   * deadline decides; anything else is thrown.
   */
  async listedOnceAnswered(node: string): Promise<NodeListing | undefined> {
    try {
      return await this.listed(node);
    } catch (error) {
      if (error instanceof ControlBrokerUnreachable || error instanceof ControllerDidNotAnswer) return undefined;
      throw error;
    }
  }

  /** The node's record in the controller's store. */
  async record(node: string): Promise<NodeRecord | undefined> {
    const [row] = await this.controller.ctx.store.query<NodeRecord>(
      'SELECT lifecycle_state, nkey, last_seen_at, release_generation, release_held FROM nodes WHERE name = $1',
      [node],
    );
    return row;
  }

  /** The results of the latest report the controller accepted from the node. */
  async latestResults(node: string): Promise<Array<{ key: string; outcome: string; detail?: string }>> {
    const [row] = await this.controller.ctx.store.query<{ results: unknown }>(
      'SELECT results FROM reports WHERE node = $1 ORDER BY epoch DESC, sequence DESC, report_sequence DESC LIMIT 1',
      [node],
    );
    const results = typeof row?.results === 'string' ? JSON.parse(row.results) : row?.results;
    return (results ?? []) as Array<{ key: string; outcome: string; detail?: string }>;
  }

  /** True once the token has been used to enrol a machine. */
  async tokenUsed(tokenId: string): Promise<boolean> {
    const [row] = await this.controller.ctx.store.query<{ consumed_at: Date | null }>('SELECT consumed_at FROM tokens WHERE id = $1', [tokenId]);
    if (row === undefined) throw new Error(`the controller has no token ${tokenId}`);
    return row.consumed_at !== null;
  }

  /**
   * Cuts the node's link at the broker: its user is taken off the broker's list and the broker
   * reloaded, which drops its connection at once and refuses it until it is put back.
   */
  cutLink(node: string): Promise<void> {
    return this.controller.ctx.broker.removeNode(node);
  }

  /** Puts the node's user back on the broker's list: it can connect again. */
  restoreLink(node: string, nkey: string): Promise<void> {
    return this.controller.ctx.broker.addNode(node, nkey);
  }

  /** Stops the controller, the broker and PostgreSQL, and removes their files. */
  async stop(): Promise<void> {
    await this.serving?.stop();
    await this.mesh.stop();
    await this.postgres.stop();
  }
}

/**
 * A hold in front of every removal the host makes. A removal waits here while the hold is shut,
 * so a path can look at a node whose release is under way, cut its link, or put something of a
 * person's in the way, and then decide when the removal goes on to the real applier. It is shut
 * from the start: removals happen only in a release.
 */
export class RemovalHold {
  /** Keys whose removal is waiting now. */
  readonly waiting: string[] = [];
  private gate: { opened: Promise<void>; open(): void } | null = null;

  constructor() {
    this.shut();
  }

  /** Removals wait from now on. */
  shut(): void {
    if (this.gate !== null) return;
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = { opened, open };
  }

  /** Lets the waiting removals go on, and every later one, until the hold is shut again. */
  open(): void {
    const gate = this.gate;
    this.gate = null;
    gate?.open();
  }

  /** The host's appliers with this hold in front of each one's `remove`. */
  wrap(appliers: ApplierSet): ApplierSet {
    const held: Record<string, Applier> = {};
    for (const [shape, applier] of Object.entries(appliers) as Array<[string, Applier]>) {
      held[shape] = {
        shape: applier.shape,
        ...(applier.refuse === undefined ? {} : { refuse: (resource, ctx) => applier.refuse?.(resource, ctx) }),
        observe: (resource, ctx) => applier.observe(resource, ctx),
        apply: (resource, ctx) => applier.apply(resource, ctx),
        keepOriginal: (resource, ctx, dir) => applier.keepOriginal(resource, ctx, dir),
        remove: async (key, ctx) => {
          await this.pass(key);
          return applier.remove(key, ctx);
        },
      };
    }
    return held as ApplierSet;
  }

  private async pass(key: string): Promise<void> {
    const gate = this.gate;
    if (gate === null) return;
    this.waiting.push(key);
    try {
      await gate.opened;
    } finally {
      this.waiting.splice(this.waiting.indexOf(key), 1);
    }
  }
}

/** Where the host's link is, as the host itself says in its log. */
export type LinkAccount = 'none' | 'up' | 'down';

/**
 * One Linux machine for one path: a temporary root that starts with only what the machine has
 * (`/etc/os-release`, `/etc/hostname`), where `install` starts the real host over it, as
 * `nox-mesh-host run --root` does: `runHost` with the appliers the machine's profile chooses.
 * The rig's only additions are a {@link RemovalHold} in front of the appliers' removals and
 * short timers (drift, link retries). Enrolment is the real `nox-mesh-host enrol` in its own
 * process, which the rig stops as it starts so a path can look at a machine mid-enrolment.
 */
export class LifecycleMachine {
  /** What the host said, line by line. */
  readonly said: string[] = [];
  readonly hold = new RemovalHold();
  /** The node name the controller gave at enrolment; null before. */
  node: string | null = null;
  /** How the last enrolment was refused; null when none was. */
  lastRefusal: EnrolRefusal | null = null;
  /** The token of the enrolment under way or last made. */
  token: { token: string; tokenId: string } | null = null;
  /** True once a release has finished on this machine. */
  released = false;
  private link: LinkAccount = 'none';
  private host: { stop: AbortController; done: Promise<void>; failure?: unknown } | undefined;
  private enrolment: { child: ChildProcess; finished: Promise<Finished> } | undefined;
  private readonly others: string[] = [];

  private constructor(
    /** The temporary directory holding the machine's root. */
    private readonly scratch: string,
    readonly root: string,
    readonly hostname: string,
  ) {}

  /** A machine called `hostname` with nothing of the mesh on it. */
  static async create(hostname: string): Promise<LifecycleMachine> {
    const scratch = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-lifecycle-model-')));
    const root = path.join(scratch, 'root');
    await writeMachineFiles(root, hostname);
    return new LifecycleMachine(scratch, root, hostname);
  }

  /** The host's state directory, where `nox-mesh-host run --root` keeps it. */
  get stateDir(): string {
    return path.join(this.root, DEFAULT_SETTINGS.stateDir);
  }

  /** True while the host started by `install` runs. */
  get hostRunning(): boolean {
    return this.host !== undefined && this.host.failure === undefined;
  }

  /** What the host threw, if it stopped on its own. */
  get hostFailure(): unknown {
    return this.host?.failure;
  }

  /** The link as the host's log tells it: up, down, or none (no session). */
  get linkAccount(): LinkAccount {
    return this.link;
  }

  /** Starts the host over the root, as the package's service does, and waits until it says it is hosted. */
  async install(): Promise<void> {
    if (this.host !== undefined) throw new Error('the host is already installed on this machine');
    const runner = new ProcessRunner();
    const profile = await detectProfile({ root: this.root, runner });
    const settings: HostSettings = { ...DEFAULT_SETTINGS, root: this.root, stateDir: this.stateDir };
    const stop = new AbortController();
    const mark = this.said.length;
    const host: { stop: AbortController; done: Promise<void>; failure?: unknown } = { stop, done: Promise.resolve() };
    host.done = runHost({
      settings,
      node: {
        parts: { runner, appliers: this.hold.wrap(appliersForProfile(profile)), adopter: createAdopter() },
        rules: { hostUnit: settings.hostUnit, root: settings.root, stateDir: settings.stateDir, shapes: SHAPES_FOR_HOST_KIND[profile.host_kind] },
      },
      log: { say: (line) => this.hear(line) },
      signal: stop.signal,
      pollMs: 100,
      rouses: NO_ROUSES,
      timings: RIG_TIMINGS,
    }).catch((error: unknown) => {
      host.failure = error;
    });
    this.host = host;
    await this.saidSince(mark, /^hosted: /);
  }

  /**
   * Runs `nox-mesh-host enrol --token` for this machine and stops the process at once (SIGSTOP),
   * before it has read the token or sent anything, so the enrolment is under way until
   * `finishEnrolment` lets it go on. Returns once the process is stopped.
   */
  async startEnrolment(token: { token: string; tokenId: string }): Promise<void> {
    if (this.enrolment !== undefined) throw new Error('an enrolment is already under way on this machine');
    this.token = token;
    const child = spawn(process.execPath, [HOST_PROGRAM, 'enrol', '--token', token.token, '--root', this.root, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.kill('SIGSTOP');
    this.enrolment = { child, finished: finished(child) };
    // The signal takes effect when the process is next scheduled, not when it is sent.
    await until('the enrolment process to stop', async () => ((await this.enrolmentHeld()) ? true : undefined));
  }

  /** True while the enrolment process exists and is held stopped. */
  async enrolmentHeld(): Promise<boolean> {
    const pid = this.enrolment?.child.pid;
    if (pid === undefined) return false;
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The state letter follows the command name in parentheses: T is stopped.
    return /\) T /.test(stat);
  }

  /** Lets the enrolment go on and waits for its end: the node's name, or the refusal. */
  async finishEnrolment(): Promise<{ node: string; nkey: string } | EnrolRefusal> {
    const enrolment = this.enrolment;
    if (enrolment === undefined) throw new Error('no enrolment is under way on this machine');
    enrolment.child.kill('SIGCONT');
    const result = await enrolment.finished;
    this.enrolment = undefined;
    const printed = parseJson(result.stdout);
    if (result.code === 0 && isObject(printed) && typeof printed.node === 'string' && typeof printed.nkey_public === 'string') {
      this.node = printed.node;
      this.lastRefusal = null;
      return { node: printed.node, nkey: printed.nkey_public };
    }
    const error = isObject(printed) && isObject(printed.error) ? printed.error : undefined;
    if (result.code === 0 || error === undefined || typeof error.condition !== 'string') {
      throw new Error(`nox-mesh-host enrol ended ${result.code} without saying why:\n${result.stdout}${result.stderr}`);
    }
    this.lastRefusal = { condition: error.condition, retryable: error.retryable === true };
    return this.lastRefusal;
  }

  /** Another machine that enrols with the given token: the real `nox-mesh-host enrol` over its own root. */
  async enrolAnotherMachine(hostname: string, token: string): Promise<Finished> {
    const root = path.join(this.scratch, hostname);
    this.others.push(root);
    await writeMachineFiles(root, hostname);
    return runProgram(HOST_PROGRAM, ['enrol', '--token', token, '--root', root, '--json']);
  }

  /**
   * The state of the host's lifecycle actor, as the running host last wrote it in its status
   * file (what `nox-mesh-host status` reads); null when it has written none.
   */
  async lifecycleState(): Promise<string | null> {
    return (await readHostStatus(this.stateDir))?.lifecycle ?? null;
  }

  /** The host's store, or null when there is none. */
  async store(): Promise<HostState | null> {
    const exists = await fs.stat(path.join(this.stateDir, 'state.json')).then(() => true, () => false);
    if (!exists) return null;
    return (await new HostStore(this.stateDir).load()).state;
  }

  /** What is at `file` on the machine: `file`, `directory`, or null when nothing is. */
  async look(file: string): Promise<'file' | 'directory' | 'other' | null> {
    const stats = await fs.lstat(path.join(this.root, file)).catch(() => undefined);
    if (stats === undefined) return null;
    return stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other';
  }

  /** Every path under the root, sorted, directories marked with a trailing slash. */
  async tree(): Promise<string[]> {
    const found: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const shown = `/${path.relative(this.root, full)}`;
        if (entry.isDirectory()) {
          found.push(`${shown}/`);
          await walk(full);
        } else {
          found.push(shown);
        }
      }
    };
    await walk(this.root);
    return found.sort();
  }

  /** A person puts a directory of their own, holding a file, where the host wrote `file`. */
  async obstruct(file: string): Promise<void> {
    const real = path.join(this.root, file);
    await fs.rm(real, { recursive: true, force: true });
    await fs.mkdir(real, { recursive: true });
    await fs.writeFile(path.join(real, 'notes'), 'kept here by a person\n');
  }

  /** The person takes their directory away again. */
  async clear(file: string): Promise<void> {
    await fs.rm(path.join(this.root, file), { recursive: true, force: true });
  }

  /** Waits until a line the host says after `mark` matches; returns its index. */
  saidSince(mark: number, pattern: RegExp, timeoutMs = PATIENCE_MS): Promise<number> {
    return until(`the host to say ${pattern}`, () => {
      const index = this.said.findIndex((line, at) => at >= mark && pattern.test(line));
      return index < 0 ? undefined : index;
    }, timeoutMs, () => this.said.join('\n'));
  }

  /** Waits until the host has said nothing matching `pattern` for `quietMs`. */
  async quietFor(pattern: RegExp, quietMs: number): Promise<void> {
    for (;;) {
      const mark = this.said.length;
      await sleep(quietMs);
      if (!this.said.slice(mark).some((line) => pattern.test(line))) return;
    }
  }

  /** Stops the host and any enrolment, and removes the machine. */
  async dispose(): Promise<void> {
    this.enrolment?.child.kill('SIGKILL');
    await this.enrolment?.finished;
    this.hold.open();
    if (this.host !== undefined) {
      this.host.stop.abort();
      await this.host.done;
    }
    await fs.rm(this.scratch, { recursive: true, force: true });
  }

  private hear(line: string): void {
    this.said.push(line);
    if (/^linked to /.test(line)) this.link = 'up';
    else if (/^(the connection to the broker closed|cannot reach the broker|enrolled as node )|; connecting again$/.test(line)) this.link = 'down';
    else if (/^(released: |hosted: |stopped$)/.test(line)) this.link = 'none';
  }
}

/** Runs `nox-mesh-host version`: the program a package installs. */
export function hostVersion(): Promise<Finished> {
  return runProgram(HOST_PROGRAM, ['version', '--json']);
}

/**
 * Waits until `look` returns something other than undefined, and returns it; fails after
 * `timeoutMs` naming `what`, with `context()` appended.
 */
export async function until<T>(what: string, look: () => Promise<T | undefined> | T | undefined, timeoutMs = PATIENCE_MS, context: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      const more = context();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more === '' ? '' : `; the host said:\n${more}`}`);
    }
    await sleep(25);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function writeMachineFiles(root: string, hostname: string): Promise<void> {
  await fs.mkdir(path.join(root, 'etc'), { recursive: true });
  await fs.writeFile(path.join(root, 'etc', 'os-release'), 'ID=debian\nVERSION_ID=12\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n');
  await fs.writeFile(path.join(root, 'etc', 'hostname'), `${hostname}\n`);
}

function runProgram(program: string, args: string[]): Promise<Finished> {
  return finished(spawn(process.execPath, [program, ...args], { cwd: REPOSITORY, stdio: ['ignore', 'pipe', 'pipe'] }));
}

function finished(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
