/**
 * A temporary world for the real launcher script: a state directory, the stub package manager
 * under the name of a real one, stub host releases it can install, and the launcher run by a
 * real POSIX shell with its environment pointing at all of it. Used by the launcher's unit
 * tests and by its model tests (model-tests/launcher.model.test.ts).
 *
 * Everything the rig reports is read from files the script and the stubs really wrote; the
 * stubs (launcher/testing/) document the files they keep under `stubRoot`.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The launcher script under test. */
export const LAUNCHER_SCRIPT = join(__dirname, '..', 'nox-mesh-host-launch');

/** The stub package manager and the two stub hosts. */
export const STUBS = {
  packageManager: join(__dirname, 'stub-package-manager'),
  runningHost: join(__dirname, 'running-host'),
  crashingHost: join(__dirname, 'crashing-host'),
} as const;

/** The launcher's exit statuses (launcher/README.md). */
export const EXIT = { stopped: 0, unusable: 1, halted: 3 } as const;

/** A POSIX shell the script is run with: its command and the arguments before the script. */
export interface Shell {
  name: string;
  command: string;
  args: string[];
}

/**
 * The shells on this machine that the script must run under: dash (Debian's and Ubuntu's
 * /bin/sh) and bash in POSIX mode (Arch's /bin/sh), whichever are installed; `sh` if neither.
 */
export function availableShells(): Shell[] {
  const candidates = [
    { name: 'dash', command: 'dash', args: [] },
    { name: 'bash --posix', command: 'bash', args: ['--posix'] },
  ];
  // By absolute path, so a test may give the launcher a PATH of its own.
  const found = candidates.flatMap((shell) => {
    const path = spawnSync('sh', ['-c', `command -v ${shell.command}`], { encoding: 'utf8' }).stdout.trim();
    return path.startsWith('/') ? [{ ...shell, command: path }] : [];
  });
  return found.length > 0 ? found : [{ name: 'sh', command: '/bin/sh', args: [] }];
}

/** The package managers the launcher knows, by the name of their command. */
export type PackageManagerName = 'apk' | 'apt-get' | 'pacman';

/** What a stub host release does when the launcher starts it. */
export type ReleaseBehaviour = 'runs' | 'crashes';

/** The launcher's files under <state-dir>/launch/, as read back: null when a file is absent. */
export interface LaunchFiles {
  /** The attempts counter; 0 when the file is absent (cleared). */
  attempts: number;
  knownGood: string | null;
  rolledBack: string | null;
  /** The halt file's `key=value` lines, or null. */
  halted: Record<string, string> | null;
}

/** One start of a stub host, from host.starts. */
export interface HostStart {
  pid: number;
  version: string;
  args: string[];
}

/** How a launcher run ended. */
export interface LauncherExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options for a rig. */
export interface LauncherRigOptions {
  shell?: Shell;
  /** Sets MESH_LAUNCH_MAX_ATTEMPTS; left unset (the script's default) when absent. */
  maxAttempts?: number;
  /** The name the stub package manager answers to (default apk). */
  packageManager?: PackageManagerName;
  /** Extra environment for every launcher run. */
  env?: Record<string, string>;
}

/** How long any wait for the script or a stub gives up after. */
const WAIT_MS = 10_000;
const POLL_MS = 5;

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One run of the launcher script: a real process, its output collected. */
export class LauncherRun {
  stdout = '';
  stderr = '';
  /** Set once the process has exited. */
  exit: LauncherExit | null = null;
  /** Resolves when the process has exited. */
  readonly exited: Promise<LauncherExit>;

  constructor(readonly process: ChildProcess) {
    process.stdout?.setEncoding('utf8').on('data', (text: string) => { this.stdout += text; });
    process.stderr?.setEncoding('utf8').on('data', (text: string) => { this.stderr += text; });
    this.exited = new Promise((resolve) => {
      process.on('close', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  /** Sends the launcher a signal, as the init does to stop it. */
  signal(name: NodeJS.Signals): void {
    this.process.kill(name);
  }

  /** Waits for the launcher to exit. */
  async waitForExit(ms = WAIT_MS): Promise<LauncherExit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the launcher did not exit within ${ms} ms; it said:\n${this.stderr}`)), ms);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A temporary state directory, stubs and launcher runs; `dispose` removes all of it. */
export class LauncherRig {
  /** The launcher run most recently started. */
  run: LauncherRun | null = null;
  /** Every launcher run, in order. */
  readonly runs: LauncherRun[] = [];

  private constructor(
    readonly root: string,
    readonly stateDir: string,
    readonly stubRoot: string,
    readonly packageManagerPath: string,
    readonly options: LauncherRigOptions,
  ) {}

  /** Makes the folders, and the stub package manager under the chosen name. Nothing is installed yet. */
  static async create(options: LauncherRigOptions = {}): Promise<LauncherRig> {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'mesh-launcher-')));
    const stateDir = join(root, 'state');
    const stubRoot = join(root, 'stub');
    await mkdir(join(stubRoot, 'releases'), { recursive: true });
    await mkdir(join(root, 'pm'), { recursive: true });
    const packageManagerPath = join(root, 'pm', options.packageManager ?? 'apk');
    await symlink(STUBS.packageManager, packageManagerPath);
    return new LauncherRig(root, stateDir, stubRoot, packageManagerPath, options);
  }

  /** The path the launcher starts the host from (MESH_HOST_BIN): what the stub package manager installs. */
  get hostBinary(): string {
    return join(this.stubRoot, 'bin', 'nox-mesh-host');
  }

  /** The launcher's own folder of files. */
  get launchDir(): string {
    return join(this.stateDir, 'launch');
  }

  /** The environment the init would give the launcher, pointed at this rig. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      LANG: 'C',
      STUB_ROOT: this.stubRoot,
      MESH_STATE_DIR: this.stateDir,
      MESH_HOST_BIN: this.hostBinary,
      MESH_LAUNCH_PACKAGE_MANAGER: this.packageManagerPath,
      ...(this.options.maxAttempts === undefined ? {} : { MESH_LAUNCH_MAX_ATTEMPTS: String(this.options.maxAttempts) }),
      ...this.options.env,
      ...extra,
    };
  }

  /** Makes `version` available to the stub package manager, as a host that runs or crashes. */
  async publish(version: string, behaviour: ReleaseBehaviour): Promise<void> {
    const stub = behaviour === 'runs' ? STUBS.runningHost : STUBS.crashingHost;
    await writeFile(join(this.stubRoot, 'releases', version), `${stub}\n`);
  }

  /**
   * Installs `version` with the stub package manager, as the system (or the host upgrading
   * itself) would: the call is recorded like any other.
   */
  installWithPackageManager(version: string): void {
    const result = spawnSync(this.packageManagerPath, this.installArgs(version), { env: this.env(), encoding: 'utf8', timeout: WAIT_MS });
    if (result.status !== 0) throw new Error(`installing ${version} with the stub package manager failed: ${result.stderr}`);
  }

  /** The arguments the launcher would give this rig's package manager for `version`. */
  installArgs(version: string): string[] {
    switch (this.options.packageManager ?? 'apk') {
      case 'apk': return ['add', `nox-mesh-host=${version}`];
      case 'apt-get': return ['install', '-y', '--allow-downgrades', `nox-mesh-host=${version}`];
      case 'pacman': return ['-S', '--noconfirm', `nox-mesh-host=${version}`];
    }
  }

  /**
   * Starts the launcher script, as the init does. It leads a process group of its own, so
   * `dispose` can end it with everything it started, and nothing else.
   */
  start(extraEnv: Record<string, string> = {}, args: string[] = []): LauncherRun {
    const shell = this.options.shell ?? availableShells()[0];
    const child = spawn(shell.command, [...shell.args, LAUNCHER_SCRIPT, ...args], {
      env: this.env(extraEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const run = new LauncherRun(child);
    this.run = run;
    this.runs.push(run);
    return run;
  }

  /** The launcher's files, read back. */
  async files(): Promise<LaunchFiles> {
    const attempts = await this.readLine(join(this.launchDir, 'attempts'));
    const halted = await this.readText(join(this.launchDir, 'halted'));
    return {
      attempts: attempts === null ? 0 : Number(attempts),
      knownGood: await this.readLine(join(this.launchDir, 'known-good')),
      rolledBack: await this.readLine(join(this.launchDir, 'rolled-back')),
      halted: halted === null ? null : Object.fromEntries(halted.split('\n').filter(Boolean).map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1)];
      })),
    };
  }

  /** Writes one of the launcher's files, as the host or an earlier run would have. */
  async writeLaunchFile(name: 'attempts' | 'known-good' | 'rolled-back' | 'halted', text: string): Promise<void> {
    await mkdir(this.launchDir, { recursive: true });
    await writeFile(join(this.launchDir, name), text);
  }

  /** Removes one of the launcher's files, as a person (the halt file) or the host would. */
  async removeLaunchFile(name: 'attempts' | 'known-good' | 'rolled-back' | 'halted'): Promise<void> {
    await rm(join(this.launchDir, name), { force: true });
  }

  /** Every start of a stub host so far. */
  /** The environment each running host was started with, as the stub records it: `<pid> NAME=value`. */
  async hostEnvironments(): Promise<string[]> {
    return this.lines('host.env');
  }

  async hostStarts(): Promise<HostStart[]> {
    return (await this.lines('host.starts')).map((line) => {
      const [pid, version, ...args] = line.split(' ');
      return { pid: Number(pid), version, args };
    });
  }

  /** `<pid> <signal>` for every stub host stopped by a signal. */
  async hostSignals(): Promise<string[]> {
    return this.lines('host.signals');
  }

  /** Pids of the stub hosts that completed a reconcile, one per reconcile. */
  async hostReconciles(): Promise<number[]> {
    return (await this.lines('host.reconciles')).map(Number);
  }

  /** Every call of the stub package manager: its name, then its arguments, space-separated. */
  async packageManagerCalls(): Promise<string[]> {
    return this.lines('package-manager.calls');
  }

  /** Every version the stub package manager installed. */
  async installs(): Promise<string[]> {
    return this.lines('installs');
  }

  /** Tells the running stub host to `reconcile` or `exit N` (written whole, so it is read whole). */
  async tellHost(command: 'reconcile' | `exit ${number}`): Promise<void> {
    await this.writeWhole(join(this.stubRoot, 'host.control'), `${command}\n`);
  }

  /** Lets a held package manager call go on (`ok`) or fail (`fail`). */
  async releasePackageManager(verdict: 'ok' | 'fail'): Promise<void> {
    await this.writeWhole(join(this.stubRoot, 'package-manager.release'), `${verdict}\n`);
  }

  /** From now on every package manager call waits for `releasePackageManager` (true), or not (false). */
  async holdPackageManager(hold: boolean): Promise<void> {
    const marker = join(this.stubRoot, 'package-manager.hold');
    if (hold) await writeFile(marker, '');
    else await rm(marker, { force: true });
  }

  /** Makes every package manager call fail (true) or not (false). */
  async failPackageManager(fail: boolean): Promise<void> {
    const marker = join(this.stubRoot, 'package-manager.fail');
    if (fail) await writeFile(marker, '');
    else await rm(marker, { force: true });
  }

  /** True when the process `pid` exists (a zombie counts: it has not been waited for). */
  static alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Polls until `check` returns something other than undefined, and returns it. On timeout it
   * fails naming `what`, with what the current launcher run said.
   */
  async waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = WAIT_MS): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        throw new Error(`waited ${ms} ms for ${what}; the launcher said:\n${this.run?.stderr ?? '(not started)'}`);
      }
      await pause(POLL_MS);
    }
  }

  /** Waits until the stub hosts have been started `count` times in all, and returns the last start. */
  async waitForHostStart(count: number): Promise<HostStart> {
    return this.waitFor(`host start ${count}`, async () => {
      const starts = await this.hostStarts();
      return starts.length >= count ? starts[count - 1] : undefined;
    });
  }

  /**
   * Ends every launcher run's process group (the launcher, its host, its package manager),
   * then any host that outlived its launcher, and removes the folder.
   */
  async dispose(): Promise<void> {
    for (const run of this.runs) {
      const pid = run.process.pid;
      if (pid !== undefined) killQuietly(-pid);
      if (run.exit === null) await run.exited;
    }
    for (const start of await this.hostStarts()) killQuietly(start.pid);
    await rm(this.root, { recursive: true, force: true });
  }

  private async writeWhole(path: string, text: string): Promise<void> {
    await writeFile(`${path}.new`, text);
    await rename(`${path}.new`, path);
  }

  private async lines(name: string): Promise<string[]> {
    const text = await this.readText(join(this.stubRoot, name));
    return text === null ? [] : text.split('\n').filter(Boolean);
  }

  private async readLine(path: string): Promise<string | null> {
    const text = await this.readText(path);
    return text === null ? null : text.split('\n')[0];
  }

  private async readText(path: string): Promise<string | null> {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}
