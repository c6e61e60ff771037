import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyContext } from '../applier';
import { ProcessRunner } from '../../../shared/process/command-runner';
import { PacmanBackend } from './pacman.backend';
import { packageApplier } from './package.applier';
import { PackageDatabaseLocked, PackageInstallFailed, PackageNotInRepository } from './package-errors';
import { buildPacmanPackage } from './testing/build-pacman-package';
import { addToPacmanRepository } from './testing/pacman-repository';
import { makePacmanRoot } from './testing/pacman-root';
import { RecordingRunner } from './testing/recording-runner';
import { refusalOf } from './testing/refusal-of';
import { scratchMachine } from './testing/scratch-machine';

// Real pacman installs hand-made packages into a temporary root from a local repository made
// with repo-add; the assertions read the local database back with pacman -Q directly.

const runner = new ProcessRunner();
let scratch: string;
let packages: string;
let repository: string;
let newer: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'pacman-backend-'));
  packages = join(scratch, 'packages');
  for (const version of ['1.0-1', '1.1-1', '1:0.9-1']) {
    await buildPacmanPackage(packages, { name: 'demo', version, files: { 'usr/share/demo/version': `${version}\n` } });
  }
  await buildPacmanPackage(packages, { name: 'demo-extra', version: '1.0-1', files: { 'usr/share/demo-extra/version': '1.0-1\n' } });
  // The shared repository holds 1.0-1; tests that need 1.1-1 publish it into their own, or
  // take the shared one holding only 1.1-1, which leaves 1.0-1 to the package cache.
  repository = await publish('repository', ['demo-1.0-1-any.pkg.tar.zst']);
  newer = await publish('newer', ['demo-1.1-1-any.pkg.tar.zst']);
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A repository directory `mesh` holding the given package files, added in order. */
async function publish(directoryName: string, files: string[]): Promise<string> {
  const directory = join(scratch, directoryName);
  await mkdir(directory, { recursive: true });
  for (const file of files) {
    await copyFile(join(packages, file), join(directory, file));
    await addToPacmanRepository(directory, 'mesh', join(directory, file));
  }
  return directory;
}

/**
 * A fresh machine root whose pacman.conf names `repositoryPath` as repository `mesh`, with
 * `settings` as more lines of its [options].
 */
async function machine(repositoryPath: string | undefined = repository, settings: string[] = []): Promise<ApplyContext> {
  const ctx = await scratchMachine(scratch, runner);
  await makePacmanRoot(ctx.root, { settings, ...(repositoryPath === undefined ? {} : { repository: { name: 'mesh', path: repositoryPath } }) });
  return ctx;
}

/** Copies a built package file into the root's `cacheDir` (as a path on the machine) and returns where it is now. */
async function cache(ctx: ApplyContext, file: string, cacheDir = '/var/cache/pacman/pkg'): Promise<string> {
  const directory = join(ctx.root, cacheDir);
  await mkdir(directory, { recursive: true });
  await copyFile(join(packages, file), join(directory, file));
  return join(directory, file);
}

/** What pacman's local database says, asked directly: "demo 1.0-1", or undefined. */
async function pacmanSays(ctx: ApplyContext, name: string): Promise<string | undefined> {
  const result = await runner.run(['pacman', '--root', ctx.root, '--dbpath', join(ctx.root, 'var/lib/pacman'), '--config', '/dev/null', '-Q', name]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

const applier = packageApplier(new PacmanBackend());

describe('PacmanBackend with real pacman in a root', () => {
  test('installs the declared version, reads it back from the local database, then upgrades it when the repository has the next', async () => {
    const growing = await publish('growing', ['demo-1.0-1-any.pkg.tar.zst']);
    const ctx = await machine(growing);
    const v10 = { shape: 'package', name: 'demo', version: '1.0-1' } as const;
    const v11 = { shape: 'package', name: 'demo', version: '1.1-1' } as const;

    expect(await applier.observe(v10, ctx)).toEqual({ present: false, differences: ['not installed'] });
    await applier.apply(v10, ctx);
    expect(await applier.observe(v10, ctx)).toEqual({ present: true, differences: [] });
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.0-1\n');

    // Published after the machine read the repository: found by refreshing once.
    await publish('growing', ['demo-1.1-1-any.pkg.tar.zst']);
    expect(await applier.observe(v11, ctx)).toEqual({ present: true, differences: ['version 1.0-1 installed, declared 1.1-1'] });
    await applier.apply(v11, ctx);
    expect(await applier.observe(v11, ctx)).toEqual({ present: true, differences: [] });
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.1-1');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.1-1\n');
  });

  test('forgets an undeclared package and leaves it installed', async () => {
    const ctx = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    expect(await applier.remove('package:demo', ctx)).toBe('forgotten');

    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.0-1\n');
  });

  test('a version-less declaration installs what the repository has and is then satisfied', async () => {
    const ctx = await machine();
    const anyDemo = { shape: 'package', name: 'demo' } as const;

    await applier.apply(anyDemo, ctx);

    expect(await applier.observe(anyDemo, ctx)).toEqual({ present: true, differences: [] });
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
  });

  test('a package the repository does not have fails with pacman\'s own words, and nothing is installed', async () => {
    const ctx = await machine();
    const absent = { shape: 'package', name: 'absent' } as const;

    const failure = await refusalOf(applier.apply(absent, ctx), PackageNotInRepository);

    expect(failure.message).toContain('error: target not found: absent');
    expect(failure.next).toContain('pacman -Si absent');
    expect(await applier.observe(absent, ctx)).toEqual({ present: false, differences: ['not installed'] });
    expect(await pacmanSays(ctx, 'absent')).toBeUndefined();
  });

  test('a version the repository does not list fails as not in the repository and leaves the installed one alone', async () => {
    const ctx = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx), PackageNotInRepository);

    expect(failure.message).toContain('target not found: demo=1.1-1');
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
  });

  test('a pinned version older than the repository\'s is taken from the package cache, read back, and said to come from there', async () => {
    const ctx = await machine(newer);
    const backend = new PacmanBackend();
    const v10 = { shape: 'package', name: 'demo', version: '1.0-1' } as const;
    await applier.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx);
    const cached = await cache(ctx, 'demo-1.0-1-any.pkg.tar.zst');
    expect(await applier.observe(v10, ctx)).toEqual({ present: true, differences: ['version 1.1-1 installed, declared 1.0-1'] });

    const note = await backend.installNoting('demo', '1.0-1', ctx);

    expect(note).toContain('from the package cache');
    expect(note).toContain(cached);
    expect(await applier.observe(v10, ctx)).toEqual({ present: true, differences: [] });
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.0-1\n');
    // From the repository the backend has nothing to say.
    expect(await backend.installNoting('demo', '1.1-1', ctx)).toBeUndefined();
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.1-1');
  });

  test('looks in every CacheDir of the root\'s pacman.conf, resolved under the root, and finds a version with an epoch by its file name', async () => {
    const ctx = await machine(repository, ['CacheDir = /srv/first/ /srv/second/ # two on one line']);
    await cache(ctx, 'demo-1:0.9-1-any.pkg.tar.zst', '/srv/second');
    const pinned = { shape: 'package', name: 'demo', version: '1:0.9-1' } as const;

    await applier.apply(pinned, ctx);

    expect(await applier.observe(pinned, ctx)).toEqual({ present: true, differences: [] });
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1:0.9-1');
  });

  test('a pinned version in neither a repository nor the cache is refused, saying where it looked and what to put there', async () => {
    const ctx = await machine(repository, ['CacheDir = /srv/packages/']);
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx), PackageNotInRepository);

    const next = failure.next;
    expect(next).toContain(`looked in ${join(ctx.root, 'srv/packages')}, ${join(ctx.root, 'var/cache/pacman/pkg')}`);
    expect(next).toContain('demo-1.1-1-<arch>.pkg.tar.*');
    expect(next).toContain('put that package file in one of those directories');
    expect(next).toContain(join(ctx.root, 'etc/pacman.conf'));
    expect(next).toContain('the next apply installs it');
    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
  });

  test('a cached package whose name only begins with the declared name is not taken for it', async () => {
    const ctx = await machine(newer);
    await cache(ctx, 'demo-extra-1.0-1-any.pkg.tar.zst');

    await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx), PackageNotInRepository);

    expect(await pacmanSays(ctx, 'demo')).toBeUndefined();
    expect(await pacmanSays(ctx, 'demo-extra')).toBeUndefined();
  });

  test('a signature file in the cache is not taken for the package it signs', async () => {
    const ctx = await machine(newer);
    const signature = join(ctx.root, 'var/cache/pacman/pkg/demo-1.0-1-any.pkg.tar.zst.sig');
    await mkdir(join(ctx.root, 'var/cache/pacman/pkg'), { recursive: true });
    await copyFile(join(packages, 'demo-1.0-1-any.pkg.tar.zst'), signature);

    await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx), PackageNotInRepository);

    expect(await pacmanSays(ctx, 'demo')).toBeUndefined();
  });

  test('a cached package is checked against its signature as the root\'s pacman.conf says, and a bad one is refused', async () => {
    const ctx = await machine(newer, ['LocalFileSigLevel = Optional']);
    const cached = await cache(ctx, 'demo-1.0-1-any.pkg.tar.zst');
    await writeFile(`${cached}.sig`, 'not a signature\n');

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx), PackageInstallFailed);

    expect(failure.message).toContain('invalid or corrupted package (PGP signature)');
    expect(failure.next).toContain(`pacman -U ${cached}`);
    expect(await pacmanSays(ctx, 'demo')).toBeUndefined();
  });

  test('a directory source also falls back to the machine\'s package cache', async () => {
    const ctx = await machine(undefined);
    const fromDirectory = packageApplier(new PacmanBackend({ source: { kind: 'directory', path: newer, repository: 'mesh' } }));
    await cache(ctx, 'demo-1.0-1-any.pkg.tar.zst');

    await fromDirectory.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
  });

  test('a locked database fails as locked and retryable, naming the lock file to remove if no pacman runs', async () => {
    const ctx = await machine();
    const lock = join(ctx.root, 'var/lib/pacman/db.lck');
    await writeFile(lock, '');

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx), PackageDatabaseLocked);

    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain('could not lock database');
    expect(failure.next).toContain(lock);
    expect(await pacmanSays(ctx, 'demo')).toBeUndefined();
  });

  test('keeps the installed version as the original, and keeps nothing for a package not installed', async () => {
    const ctx = await machine();
    const declared = { shape: 'package', name: 'demo', version: '1.1-1' } as const;
    const kept = join(ctx.stateDir, 'originals');
    expect(await applier.keepOriginal(declared, ctx, kept)).toBeUndefined();

    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);
    const path = await applier.keepOriginal(declared, ctx, kept);

    expect(JSON.parse(await readFile(path as string, 'utf8'))).toEqual({ shape: 'package', name: 'demo', version: '1.0-1', package_manager: 'pacman' });
  });

  test('a directory source installs from that repository alone, with a pacman.conf of its own', async () => {
    const ctx = await machine(undefined);
    const fromDirectory = packageApplier(new PacmanBackend({ source: { kind: 'directory', path: repository, repository: 'mesh' } }));

    await fromDirectory.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    expect(await pacmanSays(ctx, 'demo')).toBe('demo 1.0-1');
    expect(await readFile(join(ctx.stateDir, 'packages/pacman/pacman.conf'), 'utf8')).toContain(`Server = file://${repository}`);
  });

  test('on the machine itself runs pacman as a person would, with no paths of its own', async () => {
    const recording = new RecordingRunner();

    await new PacmanBackend().install('nginx', '1.24.0-1', { root: '/', stateDir: join(scratch, 'state-machine-root'), runner: recording, hostUnit: 'nox-mesh-host.service' });

    expect(recording.calls.map((call) => call.argv)).toEqual([['pacman', '--noconfirm', '--noprogressbar', '--needed', '--sync', 'nginx=1.24.0-1']]);
  });

  test('a root without a pacman database is unreadable rather than "not installed"', async () => {
    const ctx = await machine();
    await rm(join(ctx.root, 'var/lib/pacman'), { recursive: true });

    const observation = await applier.observe({ shape: 'package', name: 'demo' }, ctx);

    expect(observation.unreadable).toMatch(/pacman could not read the package database/);
    expect(observation.present).toBe(false);
  });
});
