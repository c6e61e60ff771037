import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DpkgBackend } from '../actors/host/appliers/package/dpkg.backend';
import { packageApplier } from '../actors/host/appliers/package/package.applier';
import { PacmanBackend } from '../actors/host/appliers/package/pacman.backend';
import { NewHostDoesNotRun } from '../actors/host/appliers/package/self-upgrade';
import { buildDeb } from '../actors/host/appliers/package/testing/build-deb';
import { makeDpkgRoot } from '../actors/host/appliers/package/testing/dpkg-root';
import { writeFlatAptIndex } from '../actors/host/appliers/package/testing/flat-apt-repository';
import { buildPacmanPackage } from '../actors/host/appliers/package/testing/build-pacman-package';
import { addToPacmanRepository } from '../actors/host/appliers/package/testing/pacman-repository';
import { makePacmanRoot } from '../actors/host/appliers/package/testing/pacman-root';
import { bashOffersFirstWord, fishOffers, manRenders } from './testing/installed-docs';
import { runTool } from '../actors/host/appliers/package/testing/run-tool';
import type { ApplyContext } from '../actors/host/appliers/applier';
import { recordCompletedReconcile } from '../actors/host/launch-state/record-completed-reconcile';
import { readRestartDue, clearRestartDue } from '../actors/host/launch-state/restart-due';
import { ProcessRunner } from '../actors/shared/process/command-runner';
import { buildArchPackage, buildDebianPackage } from '../scripts/build-packages';
import { STAND_IN_RELEASES, standInTarball, type StandInVersion as Version } from './testing/stand-in-releases';

// The host's own packages, built by scripts/build-packages.ts from packaging/, installed and
// upgraded into temporary roots by the real apt-get/dpkg and pacman through the host's package
// applier, and rolled back by the real launcher through the same package managers. The host
// binary in these packages is a stand-in (testing/stand-in-releases): one release runs, one
// crashes on start, one is not a program at all.

const LAUNCHER = path.join(__dirname, '..', 'launcher', 'nox-mesh-host-launch');
const HOST = 'nox-mesh-host';
const DISPATCHER = 'etc/NetworkManager/dispatcher.d/90-nox-mesh-host';
const exec = promisify(execFile);

let scratch: string;
/** The flat apt repository: every release of the host and the libraries it depends on. */
let aptRepository: string;
/** The Arch packages, by version (a pacman repository lists one version, so each test makes its own). */
const archPackages = new Map<Version, string>();
let archLibraries: string[];
const debs = new Map<Version, string>();
const runner = new ProcessRunner();
const started: ChildProcess[] = [];

beforeAll(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'host-package-'));
  aptRepository = path.join(scratch, 'apt');
  const archDir = path.join(scratch, 'arch');
  for (const version of Object.keys(STAND_IN_RELEASES) as Version[]) {
    const options = { tarball: await standInTarball(scratch, version), version, release: 1, fast: true };
    debs.set(version, await buildDebianPackage({ ...options, outDir: aptRepository }));
    archPackages.set(version, await buildArchPackage({ ...options, outDir: archDir }));
  }
  // What the host's packages depend on, as a real system has it.
  for (const [name, version] of [['libc6', '2.36-9'], ['libgcc-s1', '12.2.0-14'], ['libstdc++6', '12.2.0-14']]) {
    await buildDeb(aptRepository, { name: name as string, version: version as string });
  }
  await writeFlatAptIndex(aptRepository);
  archLibraries = [
    await buildPacmanPackage(archDir, { name: 'glibc', version: '2.39-1' }),
    await buildPacmanPackage(archDir, { name: 'gcc-libs', version: '14.1.1-1' }),
  ];
}, 60_000);

afterEach(() => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

afterAll(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

let count = 0;
/** A fresh machine: its root, the host's state directory and a folder for the stand-ins' marks. */
async function freshMachine(): Promise<{ ctx: ApplyContext; marks: string; wrappers: string }> {
  count += 1;
  const base = path.join(scratch, `machine-${count}`);
  const ctx: ApplyContext = { root: path.join(base, 'root'), stateDir: path.join(base, 'state'), runner, hostUnit: HOST };
  const marks = path.join(base, 'marks');
  const wrappers = path.join(base, 'wrappers');
  for (const dir of [ctx.root, ctx.stateDir, marks, wrappers]) await fs.mkdir(dir, { recursive: true });
  return { ctx, marks, wrappers };
}

/** A pacman repository holding the libraries and `versions` of the host (the last one listed wins). */
async function pacmanRepository(versions: Version[]): Promise<string> {
  count += 1;
  const dir = path.join(scratch, `pacman-repository-${count}`);
  await fs.mkdir(dir);
  for (const file of [...archLibraries, ...versions.map((version) => archPackages.get(version) as string)]) {
    await fs.copyFile(file, path.join(dir, path.basename(file)));
    await addToPacmanRepository(dir, 'mesh', path.join(dir, path.basename(file)));
  }
  return dir;
}

async function dpkgSays(root: string): Promise<string> {
  return runTool(['dpkg-query', `--admindir=${path.join(root, 'var/lib/dpkg')}`, '-W', '-f', '${Version} ${db:Status-Status}', HOST]);
}

async function pacmanSays(root: string): Promise<string> {
  return (await runTool(['pacman', '--root', root, '--dbpath', path.join(root, 'var/lib/pacman'), '--config', '/dev/null', '-Q', HOST])).trim();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const readOr = (file: string) => fs.readFile(file, 'utf8').catch(() => undefined);

/** Starts a process the test stops; its output is kept. */
function start(argv: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Runs the real launcher over the machine until the host it started runs, then stops it. The
 * package manager it rolls back with is the real one, pointed into the root by a wrapper of
 * the same name (its name is how the launcher knows which it is).
 */
async function launchUntilRunning(machine: { ctx: ApplyContext; marks: string }, packageManager: string, extraEnv: Record<string, string> = {}) {
  const launcher = start(['sh', LAUNCHER], {
    PATH: process.env.PATH,
    MESH_STATE_DIR: machine.ctx.stateDir,
    MESH_HOST_BIN: path.join(machine.ctx.root, 'usr/bin', HOST),
    MESH_LAUNCH_MAX_ATTEMPTS: '2',
    MESH_LAUNCH_PACKAGE_MANAGER: packageManager,
    MESH_TEST_MARKS: machine.marks,
    ...extraEnv,
  });
  await until('the launcher to have a host running', () => readOr(path.join(machine.marks, 'running')));
  launcher.child.kill('SIGTERM');
  const code = await launcher.exited;
  return {
    code,
    output: launcher.output(),
    starts: ((await readOr(path.join(machine.marks, 'starts'))) ?? '').trim().split('\n'),
    rolledBack: await readOr(path.join(machine.ctx.stateDir, 'launch', 'rolled-back')),
  };
}

const declared = (version: Version) => ({ shape: 'package', name: HOST, version: `${version}-1` }) as const;

describe("the host's packages", () => {
  test('the Debian and the Arch package install the same files at the same paths', async () => {
    const deb = (await runTool(['dpkg-deb', '--contents', debs.get('0.1.0') as string])).trim().split('\n')
      .map((line) => line.split(/\s+/).slice(5).join(' ').replace(/^\.\//, ''));
    const pkg = (await runTool(['bsdtar', '-tvf', archPackages.get('0.1.0') as string])).trim().split('\n')
      .map((line) => line.split(/\s+/).slice(8).join(' '))
      .filter((name) => !name.startsWith('.'));
    const entries = (names: string[]) => names.map((name) => name.replace(/\/$/, '')).filter((name) => name !== '').sort();
    // The copyright file is where each system looks for it; everything else is at the same path.
    const elsewhere = (names: string[]) => entries(names).filter((name) => !/^usr\/share\/(doc|licenses)(\/|$)/.test(name));

    expect(elsewhere(pkg)).toEqual(elsewhere(deb));
    expect(entries(deb)).toContain('usr/share/doc/nox-mesh-host/copyright');
    expect(entries(pkg)).toContain('usr/share/licenses/nox-mesh-host/copyright');
    expect(entries(deb)).toEqual(expect.arrayContaining([
      'usr/bin/nox-mesh-host',
      'usr/lib/nox-mesh-host/launch',
      'usr/lib/nox-mesh-host/nox-mesh-host-rouse',
      'usr/lib/systemd/system/nox-mesh-host.service',
      'usr/lib/systemd/system/nox-mesh-host-resume.service',
      'usr/lib/systemd/system/suspend.target.wants/nox-mesh-host-resume.service -> ../nox-mesh-host-resume.service',
      'etc/NetworkManager/dispatcher.d/90-nox-mesh-host',
      'usr/share/man/man1/nox-mesh-host.1.gz',
      'usr/share/bash-completion/completions/nox-mesh-host',
      'usr/share/fish/vendor_completions.d/nox-mesh-host.fish',
    ]));
  });
});

describe('with apt-get and dpkg', () => {
  test('records the md5sums of what it installs, so dpkg --verify names an installed executable someone changed', async () => {
    const { ctx } = await freshMachine();
    await makeDpkgRoot(ctx.root, { aptRepository });
    await packageApplier(new DpkgBackend()).apply(declared('0.1.0'), ctx);
    const verify = () => exec('dpkg', [`--root=${ctx.root}`, '--verify', HOST], { env: { ...process.env, LC_ALL: 'C' } })
      .then(({ stdout }) => stdout, (error: { stdout?: string; code?: number }) => `exit ${error.code}: ${error.stdout ?? ''}`);
    const listed = (await fs.readFile(path.join(ctx.root, 'var/lib/dpkg/info', `${HOST}.md5sums`), 'utf8')).trim().split('\n').map((line) => line.slice(34)).sort();

    expect(listed).toEqual([
      'usr/bin/nox-mesh-host',
      'usr/lib/nox-mesh-host/launch',
      'usr/lib/nox-mesh-host/nox-mesh-host-rouse',
      'usr/lib/systemd/system/nox-mesh-host-resume.service',
      'usr/lib/systemd/system/nox-mesh-host.service',
      'usr/share/bash-completion/completions/nox-mesh-host',
      'usr/share/doc/nox-mesh-host/copyright',
      'usr/share/fish/vendor_completions.d/nox-mesh-host.fish',
      'usr/share/man/man1/nox-mesh-host.1.gz',
    ]);
    expect(await verify()).toBe('');

    await fs.appendFile(path.join(ctx.root, 'usr/bin', HOST), 'echo tampered\n');

    // dpkg's format: the third column is the md5sum's, then a blank attribute column (no conffile).
    expect(await verify()).toMatch(/^\?\?5\?{6} {3}\/usr\/bin\/nox-mesh-host\n$/);
  });

  test('installs its manual page, as man renders it, and bash and fish completions that offer its verbs', async () => {
    const { ctx } = await freshMachine();
    await makeDpkgRoot(ctx.root, { aptRepository });
    await packageApplier(new DpkgBackend()).apply(declared('0.1.0'), ctx);
    const page = manRenders(path.join(ctx.root, 'usr/share/man/man1', `${HOST}.1.gz`));

    expect(page).toMatch(/^NAME\n +nox-mesh-host - the Novox Mesh node host$/m);
    expect(page).toMatch(/^ +nox-mesh-host reconcile\b/m);
    expect(bashOffersFirstWord(path.join(ctx.root, 'usr/share/bash-completion/completions', HOST), HOST, 're')).toEqual(['reconcile']);
    expect(fishOffers(path.join(ctx.root, 'usr/share/fish/vendor_completions.d', `${HOST}.fish`), `${HOST} sta`, ctx.stateDir)).toEqual(['status']);
  });

  test('installs a machine-readable copyright file naming the licences of the host and of what its executable carries', async () => {
    const { ctx } = await freshMachine();
    await makeDpkgRoot(ctx.root, { aptRepository });
    await packageApplier(new DpkgBackend()).apply(declared('0.1.0'), ctx);
    const text = await fs.readFile(path.join(ctx.root, 'usr/share/doc', HOST, 'copyright'), 'utf8');
    const stanzas = text.split(/\n\n+/);
    const licences = stanzas.map((stanza) => /^License: (.*)$/m.exec(stanza)?.[1]).filter((name) => name !== undefined);

    expect(stanzas[0]).toMatch(/^Format: https:\/\/www\.debian\.org\/doc\/packaging-manuals\/copyright-format\/1\.0\/\n/);
    expect(licences).toEqual(['Apache-2.0', 'Apache-2.0 and MIT and ISC', 'Apache-2.0', 'MIT', 'ISC']);
  });

  test('installs the host and enables its unit, upgrades it, and the launcher rolls a release that crashes on start back through apt-get', async () => {
    const machine = await freshMachine();
    const { ctx } = machine;
    await makeDpkgRoot(ctx.root, { aptRepository });
    const applier = packageApplier(new DpkgBackend());

    await applier.apply(declared('0.1.0'), ctx);
    expect(await dpkgSays(ctx.root)).toBe('0.1.0-1 installed');
    expect(await fs.readlink(path.join(ctx.root, 'etc/systemd/system/multi-user.target.wants/nox-mesh-host.service')))
      .toBe('/usr/lib/systemd/system/nox-mesh-host.service');
    // Version 0.1.0 runs and completes a reconcile: the launcher's roll-back target.
    await clearRestartDue(ctx.stateDir);
    await recordCompletedReconcile(ctx.stateDir, '0.1.0-1');

    await applier.apply(declared('0.2.0'), ctx);
    expect(await dpkgSays(ctx.root)).toBe('0.2.0-1 installed');
    expect(await readRestartDue(ctx.stateDir)).toBe('nox-mesh-host 0.2.0, package 0.2.0-1');

    // The launcher reaches apt-get the way it would on the machine, with apt's configuration
    // pointing into the root (the file the host's apt backend keeps).
    const aptGet = path.join(machine.wrappers, 'apt-get');
    await fs.writeFile(aptGet, `#!/bin/sh\nAPT_CONFIG='${path.join(ctx.stateDir, 'packages/apt/root.conf')}' exec apt-get "$@"\n`, { mode: 0o755 });
    const launched = await launchUntilRunning(machine, aptGet);

    expect(launched.starts).toEqual(['0.2.0', '0.2.0', '0.1.0']);
    expect(launched.rolledBack).toBe('0.1.0-1\n');
    expect(launched.code).toBe(0);
    expect(await dpkgSays(ctx.root)).toBe('0.1.0-1 installed');
    // A roll back is an upgrade to dpkg: the unit stays as it was.
    expect(await fs.readlink(path.join(ctx.root, 'etc/systemd/system/multi-user.target.wants/nox-mesh-host.service')))
      .toBe('/usr/lib/systemd/system/nox-mesh-host.service');
  });

  test('an upgrade to a binary that does not execute fails the apply with the reason, puts the old version back, and leaves the old host running', async () => {
    const { ctx, marks } = await freshMachine();
    await makeDpkgRoot(ctx.root, { aptRepository });
    const applier = packageApplier(new DpkgBackend());
    await applier.apply(declared('0.1.0'), ctx);
    await clearRestartDue(ctx.stateDir);
    const oldHost = start([path.join(ctx.root, 'usr/bin', HOST), 'run'], { PATH: process.env.PATH, MESH_TEST_MARKS: marks });
    // The fake host writes its pid into the mark: read it once it is there whole.
    const oldPid = Number(await until('the old host to run', async () => /^[1-9][0-9]*\s*$/.exec((await readOr(path.join(marks, 'running'))) ?? '')?.[0]));

    const failure = await applier.apply(declared('0.3.0'), ctx).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(NewHostDoesNotRun);
    expect((failure as NewHostDoesNotRun).reason).toBe('it is not a program: neither an ELF executable nor a script');
    expect((failure as NewHostDoesNotRun).putBack).toBe('version 0.1.0-1, which was installed before, has been put back');
    expect(await dpkgSays(ctx.root)).toBe('0.1.0-1 installed');
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
    expect(oldHost.child.exitCode).toBeNull();
    expect(oldPid).toBe(oldHost.child.pid);
    expect(() => process.kill(oldPid, 0)).not.toThrow();
  });
});

describe('with pacman', () => {
  test("keeps the operator's edit of a file under /etc through an upgrade", async () => {
    const { ctx } = await freshMachine();
    const repository = await pacmanRepository(['0.1.0']);
    await makePacmanRoot(ctx.root, { repository: { name: 'mesh', path: repository } });
    const applier = packageApplier(new PacmanBackend());
    await applier.apply(declared('0.1.0'), ctx);
    await clearRestartDue(ctx.stateDir);
    const edited = '#!/bin/sh\n# the operator\'s own hook\nexit 0\n';
    await fs.writeFile(path.join(ctx.root, DISPATCHER), edited);

    const next = archPackages.get('0.2.0') as string;
    await fs.copyFile(next, path.join(repository, path.basename(next)));
    await addToPacmanRepository(repository, 'mesh', path.join(repository, path.basename(next)));
    await applier.apply(declared('0.2.0'), ctx);

    expect(await pacmanSays(ctx.root)).toBe('nox-mesh-host 0.2.0-1');
    expect(await fs.readFile(path.join(ctx.root, DISPATCHER), 'utf8')).toBe(edited);
  });

  test('installs the host, upgrades it, and the launcher rolls a release that crashes on start back from the package cache', async () => {
    const machine = await freshMachine();
    const { ctx } = machine;
    const repository = await pacmanRepository(['0.1.0']);
    await makePacmanRoot(ctx.root, { repository: { name: 'mesh', path: repository } });
    const applier = packageApplier(new PacmanBackend());

    await applier.apply(declared('0.1.0'), ctx);
    expect(await pacmanSays(ctx.root)).toBe('nox-mesh-host 0.1.0-1');
    await clearRestartDue(ctx.stateDir);
    await recordCompletedReconcile(ctx.stateDir, '0.1.0-1');

    // The mesh publishes 0.2.0: the repository now lists it instead of 0.1.0.
    const next = archPackages.get('0.2.0') as string;
    await fs.copyFile(next, path.join(repository, path.basename(next)));
    await addToPacmanRepository(repository, 'mesh', path.join(repository, path.basename(next)));
    await applier.apply(declared('0.2.0'), ctx);
    expect(await pacmanSays(ctx.root)).toBe('nox-mesh-host 0.2.0-1');
    expect(await readRestartDue(ctx.stateDir)).toBe('nox-mesh-host 0.2.0, package 0.2.0-1');

    // The repository no longer has 0.1.0; pacman's cache under the root does, and the launcher
    // takes it from there (the mesh's repository may be out of reach while the host is down).
    const cache = path.join(ctx.root, 'var/cache/pacman/pkg');
    expect((await fs.readdir(cache)).filter((file) => file.startsWith(`${HOST}-`)).sort())
      .toEqual([`${HOST}-0.1.0-1-x86_64.pkg.tar.zst`, `${HOST}-0.2.0-1-x86_64.pkg.tar.zst`]);
    const pacman = path.join(machine.wrappers, 'pacman');
    const inRoot = [
      '--root', ctx.root, '--dbpath', path.join(ctx.root, 'var/lib/pacman'), '--cachedir', cache,
      '--logfile', path.join(ctx.root, 'var/log/pacman.log'), '--config', path.join(ctx.root, 'etc/pacman.conf'),
    ].map((arg) => `'${arg}'`).join(' ');
    await fs.writeFile(pacman, `#!/bin/sh\nexec pacman ${inRoot} "$@"\n`, { mode: 0o755 });
    const launched = await launchUntilRunning(machine, pacman, { MESH_LAUNCH_PACMAN_CACHE: cache });

    expect(launched.starts).toEqual(['0.2.0', '0.2.0', '0.1.0']);
    expect(launched.rolledBack).toBe('0.1.0-1\n');
    expect(launched.code).toBe(0);
    expect(await pacmanSays(ctx.root)).toBe('nox-mesh-host 0.1.0-1');
  });

  /** A machine holding 0.1.0 from the mesh's repository, which then moves on to a 0.3.0 that does not execute. */
  async function movedOnToBroken() {
    const { ctx } = await freshMachine();
    const repository = await pacmanRepository(['0.1.0']);
    await makePacmanRoot(ctx.root, { repository: { name: 'mesh', path: repository } });
    const applier = packageApplier(new PacmanBackend());
    await applier.apply(declared('0.1.0'), ctx);
    await clearRestartDue(ctx.stateDir);
    const next = archPackages.get('0.3.0') as string;
    await fs.copyFile(next, path.join(repository, path.basename(next)));
    await addToPacmanRepository(repository, 'mesh', path.join(repository, path.basename(next)));
    return { ctx, applier };
  }

  test('an upgrade to a binary that does not execute fails the apply, and the old version is put back from the package cache though the repository moved on', async () => {
    const { ctx, applier } = await movedOnToBroken();

    const failure = await applier.apply(declared('0.3.0'), ctx).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(NewHostDoesNotRun);
    expect((failure as NewHostDoesNotRun).reason).toBe('it is not a program: neither an ELF executable nor a script');
    expect((failure as NewHostDoesNotRun).putBack).toBe('version 0.1.0-1, which was installed before, has been put back');
    expect(await pacmanSays(ctx.root)).toBe('nox-mesh-host 0.1.0-1');
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });

  test('an upgrade to a binary that does not execute, with the old version in neither repository nor cache, says it cannot be put back', async () => {
    const { ctx, applier } = await movedOnToBroken();
    const cache = path.join(ctx.root, 'var/cache/pacman/pkg');
    for (const file of await fs.readdir(cache)) if (file.startsWith(`${HOST}-0.1.0-`)) await fs.rm(path.join(cache, file));

    const failure = await applier.apply(declared('0.3.0'), ctx).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(NewHostDoesNotRun);
    expect((failure as NewHostDoesNotRun).putBack).toMatch(/^putting back version 0\.1\.0-1 failed as well \(package "nox-mesh-host" version "0\.1\.0-1" is not in the repositories of pacman/);
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });
});
