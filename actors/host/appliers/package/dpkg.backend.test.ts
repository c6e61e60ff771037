import { spawn } from 'node:child_process';
import { access, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyContext } from '../applier';
import { ProcessRunner, type CommandRunner, type RunOptions, type RunResult } from '../../../shared/process/command-runner';
import { DpkgBackend } from './dpkg.backend';
import { packageApplier } from './package.applier';
import { PackageDatabaseLocked, PackageInstallFailed, PackageNotInRepository } from './package-errors';
import { buildDeb } from './testing/build-deb';
import { makeDpkgRoot } from './testing/dpkg-root';
import { RecordingRunner } from './testing/recording-runner';
import { refusalOf } from './testing/refusal-of';
import { scratchMachine } from './testing/scratch-machine';
import { writeFlatAptIndex } from './testing/flat-apt-repository';

// Real apt-get and dpkg install hand-made packages into a temporary root; the assertions read
// the dpkg database back with dpkg-query, independently of the backend under test.

const runner = new ProcessRunner();
let scratch: string;
let repository: string;
let holderDeb: string;

const HOLDER_PREINST = `#!/bin/sh
# Holds dpkg's locks until the test says to let go (or ten seconds pass).
touch "$DPKG_ROOT/holder-started"
i=0
while [ ! -e "$DPKG_ROOT/holder-release" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
`;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'dpkg-backend-'));
  repository = join(scratch, 'repository');
  for (const version of ['1.0-1', '1.1-1']) {
    await buildDeb(repository, { name: 'demo', version, files: { 'usr/share/demo/version': `${version}\n` } });
  }
  await writeFlatAptIndex(repository);
  holderDeb = await buildDeb(join(scratch, 'loose'), { name: 'holder', version: '1', preinst: HOLDER_PREINST });
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh machine root (its apt sources naming `aptRepository`) and state directory. */
async function machine(aptRepository: string | undefined = repository): Promise<ApplyContext> {
  const ctx = await scratchMachine(scratch, runner);
  await makeDpkgRoot(ctx.root, aptRepository === undefined ? {} : { aptRepository });
  return ctx;
}

/** What the dpkg database says, asked directly: "1.0-1 installed", or undefined when dpkg has no record. */
async function dpkgSays(ctx: ApplyContext, name: string): Promise<string | undefined> {
  const result = await runner.run(['dpkg-query', `--admindir=${join(ctx.root, 'var/lib/dpkg')}`, '-W', '-f', '${Version} ${db:Status-Status}', name]);
  return result.code === 0 ? result.stdout : undefined;
}

const applier = packageApplier(new DpkgBackend());

describe('DpkgBackend with real apt-get and dpkg in a root', () => {
  test('installs the declared version, reads it back from the dpkg database, then upgrades and downgrades it', async () => {
    const ctx = await machine();
    const v10 = { shape: 'package', name: 'demo', version: '1.0-1' } as const;
    const v11 = { shape: 'package', name: 'demo', version: '1.1-1' } as const;

    expect(await applier.observe(v10, ctx)).toEqual({ present: false, differences: ['not installed'] });
    await applier.apply(v10, ctx);
    expect(await applier.observe(v10, ctx)).toEqual({ present: true, differences: [] });
    expect(await dpkgSays(ctx, 'demo')).toBe('1.0-1 installed');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.0-1\n');

    expect(await applier.observe(v11, ctx)).toEqual({ present: true, differences: ['version 1.0-1 installed, declared 1.1-1'] });
    await applier.apply(v11, ctx);
    expect(await applier.observe(v11, ctx)).toEqual({ present: true, differences: [] });
    expect(await dpkgSays(ctx, 'demo')).toBe('1.1-1 installed');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.1-1\n');

    await applier.apply(v10, ctx);
    expect(await dpkgSays(ctx, 'demo')).toBe('1.0-1 installed');
  });

  test('forgets an undeclared package and leaves it installed', async () => {
    const ctx = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx);

    expect(await applier.remove('package:demo', ctx)).toBe('forgotten');

    expect(await dpkgSays(ctx, 'demo')).toBe('1.1-1 installed');
    expect(await readFile(join(ctx.root, 'usr/share/demo/version'), 'utf8')).toBe('1.1-1\n');
  });

  test('a version-less declaration is satisfied by whatever version is installed', async () => {
    const ctx = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    expect(await applier.observe({ shape: 'package', name: 'demo' }, ctx)).toEqual({ present: true, differences: [] });
  });

  test('a package the repository does not have fails with apt-get\'s own words, and nothing is installed', async () => {
    const ctx = await machine();
    const absent = { shape: 'package', name: 'absent' } as const;

    const failure = await refusalOf(applier.apply(absent, ctx), PackageNotInRepository);

    expect(failure.message).toContain('E: Unable to locate package absent');
    expect(failure.next).toContain('apt-cache policy absent');
    expect(await applier.observe(absent, ctx)).toEqual({ present: false, differences: ['not installed'] });
    expect(await dpkgSays(ctx, 'absent')).toBeUndefined();
  });

  test('a version the repository does not have fails as not in the repository and leaves the installed one alone', async () => {
    const ctx = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '9.9-1' }, ctx), PackageNotInRepository);

    expect(failure.message).toContain("Version '9.9-1' for 'demo' was not found");
    expect(await dpkgSays(ctx, 'demo')).toBe('1.0-1 installed');
  });

  test('refreshes the package lists once when the declared version was published after they were read', async () => {
    const growing = join(scratch, 'growing-repository');
    await mkdir(growing, { recursive: true });
    await copyFile(join(repository, 'demo_1.0-1_all.deb'), join(growing, 'demo_1.0-1_all.deb'));
    await writeFlatAptIndex(growing);
    const ctx = await machine(growing);
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);

    await copyFile(join(repository, 'demo_1.1-1_all.deb'), join(growing, 'demo_1.1-1_all.deb'));
    await writeFlatAptIndex(growing);
    await applier.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx);

    expect(await dpkgSays(ctx, 'demo')).toBe('1.1-1 installed');
  });

  test('a source the machine cannot read fails with the refresh\'s words and says to run it by hand', async () => {
    const ctx = await machine(join(scratch, 'no-such-repository'));

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo' }, ctx), PackageInstallFailed);

    expect(failure.message).toContain('E: Failed to fetch');
    expect(failure.next).toContain('run "apt-get update" on the machine');
  });

  test('a database locked by another dpkg fails as locked and retryable, with dpkg\'s words', async () => {
    const ctx = await machine();
    const holder = spawn('dpkg', ['--root', ctx.root, '--force-script-chrootless', '--install', holderDeb], { stdio: 'ignore' });
    const holderExited = new Promise((resolve) => holder.on('close', resolve));
    try {
      await waitFor(join(ctx.root, 'holder-started'));

      const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx), PackageDatabaseLocked);

      expect(failure.retryable).toBe(true);
      expect(failure.message).toMatch(/Could not get lock .*lock-frontend/);
      expect(failure.next).toContain('Never delete the lock files');
    } finally {
      await writeFile(join(ctx.root, 'holder-release'), '');
      await holderExited;
    }
    expect(await dpkgSays(ctx, 'demo')).toBeUndefined();
  });

  test('the read-back asks the dpkg database, so an install that claims success without installing is seen', async () => {
    const ctx = await machine();
    const liar: CommandRunner = {
      run: (argv: readonly string[], options?: RunOptions): Promise<RunResult> =>
        argv[0] === 'apt-get'
          ? Promise.resolve({ argv, code: 0, signal: null, stdout: '', stderr: '', timedOut: false, durationMs: 0 })
          : runner.run(argv, options),
    };
    const declared = { shape: 'package', name: 'demo', version: '1.0-1' } as const;

    await applier.apply(declared, { ...ctx, runner: liar });

    expect(await applier.observe(declared, { ...ctx, runner: liar })).toEqual({ present: false, differences: ['not installed'] });
  });

  test('keeps the installed version as the original, and keeps nothing for a package not installed', async () => {
    const ctx = await machine();
    const declared = { shape: 'package', name: 'demo', version: '1.1-1' } as const;
    const kept = join(ctx.stateDir, 'originals');
    expect(await applier.keepOriginal(declared, ctx, kept)).toBeUndefined();

    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-1' }, ctx);
    const path = await applier.keepOriginal(declared, ctx, kept);

    expect(path).toBe(join(kept, 'package-demo.json'));
    expect(JSON.parse(await readFile(path as string, 'utf8'))).toEqual({ shape: 'package', name: 'demo', version: '1.0-1', package_manager: 'apt' });
  });

  test('a directory source reads only that flat repository, keeping its lists in the state directory', async () => {
    const ctx = await machine(undefined);
    const fromDirectory = packageApplier(new DpkgBackend({ source: { kind: 'directory', path: repository } }));

    await fromDirectory.apply({ shape: 'package', name: 'demo', version: '1.1-1' }, ctx);

    expect(await dpkgSays(ctx, 'demo')).toBe('1.1-1 installed');
    await expect(access(join(ctx.stateDir, 'packages/apt/lists'))).resolves.toBeUndefined();
  });

  test('on the machine itself runs apt-get as a person would, non-interactively and keeping changed configuration files', async () => {
    const recording = new RecordingRunner();
    const stateDir = join(scratch, 'state-machine-root');

    await new DpkgBackend().install('nginx', '1.24.0-1', { root: '/', stateDir, runner: recording, hostUnit: 'nox-mesh-host.service' });

    expect(recording.calls.map((call) => call.argv)).toEqual([
      ['apt-get', 'install', '--yes', '--allow-downgrades', '-o', 'Dpkg::Options::=--force-confdef', '-o', 'Dpkg::Options::=--force-confold', 'nginx=1.24.0-1'],
    ]);
    expect(recording.calls[0]?.options.env).toEqual({ LC_ALL: 'C', DEBIAN_FRONTEND: 'noninteractive', APT_LISTCHANGES_FRONTEND: 'none' });
  });

  test('an apply abandoned before the install starts runs nothing', async () => {
    const recording = new RecordingRunner();
    const ctx = { ...(await machine()), runner: recording, signal: AbortSignal.abort() };

    await expect(applier.apply({ shape: 'package', name: 'demo' }, ctx)).rejects.toThrow(/aborted/);

    expect(recording.calls).toEqual([]);
  });

  test('a root without a dpkg database is unreadable rather than "not installed"', async () => {
    const ctx = await machine();
    await rm(join(ctx.root, 'var/lib/dpkg'), { recursive: true });

    const observation = await applier.observe({ shape: 'package', name: 'demo' }, ctx);

    expect(observation.unreadable).toMatch(/no dpkg database at .*var\/lib\/dpkg/);
    expect(observation.differences).not.toEqual([]);
  });
});

async function waitFor(path: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await access(path);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${path} did not appear within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
