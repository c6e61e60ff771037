import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyContext } from '../applier';
import { ApkBackend } from './apk.backend';
import { packageApplier } from './package.applier';
import { PackageDatabaseLocked, PackageNotInRepository } from './package-errors';
import { writeApkInstalled } from './testing/apk-installed-file';
import { FakeApkRunner } from './testing/fake-apk-runner';
import { refusalOf } from './testing/refusal-of';
import { scratchMachine } from './testing/scratch-machine';

// apk-tools is not packaged for Debian, so apk itself is played by FakeApkRunner (which
// answers with apk's own messages and writes apk's database format); the read-back is the
// backend's real parser over a real file in a temporary root.

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'apk-backend-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A fresh Alpine-like root (an apk database holding only musl) and a fake apk. */
async function machine(): Promise<{ ctx: ApplyContext; apk: FakeApkRunner }> {
  const apk = new FakeApkRunner();
  apk.publish('demo', '1.0-r0');
  const ctx = await scratchMachine(scratch, apk);
  await writeApkInstalled(ctx.root, new Map([['musl', '1.2.4-r2']]));
  return { ctx, apk };
}

const applier = packageApplier(new ApkBackend());

describe('ApkBackend', () => {
  test('installs with apk add name=version under --root and reads the version back from lib/apk/db/installed', async () => {
    const { ctx, apk } = await machine();
    const declared = { shape: 'package', name: 'demo', version: '1.0-r0' } as const;

    expect(await applier.observe(declared, ctx)).toEqual({ present: false, differences: ['not installed'] });
    await applier.apply(declared, ctx);

    expect(await applier.observe(declared, ctx)).toEqual({ present: true, differences: [] });
    expect(apk.calls).toContainEqual(['apk', '--root', ctx.root, '--no-progress', '--update-cache', 'add', 'demo=1.0-r0']);
    expect(await readFile(join(ctx.root, 'lib/apk/db/installed'), 'utf8')).toMatch(/^P:demo\nV:1\.0-r0$/m);
  });

  test('upgrades to a version published after the index was fetched, by fetching it once more', async () => {
    const { ctx, apk } = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-r0' }, ctx);
    apk.publish('demo', '1.1-r0');
    const newer = { shape: 'package', name: 'demo', version: '1.1-r0' } as const;

    expect(await applier.observe(newer, ctx)).toEqual({ present: true, differences: ['version 1.0-r0 installed, declared 1.1-r0'] });
    await applier.apply(newer, ctx);

    expect(await applier.observe(newer, ctx)).toEqual({ present: true, differences: [] });
    expect(apk.calls.slice(-2).map((argv) => argv.includes('--update-cache'))).toEqual([false, true]);
  });

  test('forgets an undeclared package without running apk at all', async () => {
    const { ctx, apk } = await machine();
    await applier.apply({ shape: 'package', name: 'demo', version: '1.0-r0' }, ctx);
    const callsBefore = apk.calls.length;

    expect(await applier.remove('package:demo', ctx)).toBe('forgotten');

    expect(apk.calls.length).toBe(callsBefore);
    expect(await applier.observe({ shape: 'package', name: 'demo' }, ctx)).toEqual({ present: true, differences: [] });
  });

  test('a package no repository has fails with apk\'s words, and nothing is installed', async () => {
    const { ctx } = await machine();
    const absent = { shape: 'package', name: 'absent' } as const;

    const failure = await refusalOf(applier.apply(absent, ctx), PackageNotInRepository);

    expect(failure.message).toContain('absent (no such package)');
    expect(await applier.observe(absent, ctx)).toEqual({ present: false, differences: ['not installed'] });
  });

  test('a version no repository has fails as not in the repository', async () => {
    const { ctx } = await machine();

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo', version: '9.9-r0' }, ctx), PackageNotInRepository);

    expect(failure.message).toContain('breaks: world[demo=9.9-r0]');
  });

  test('a database locked by another apk fails as locked and retryable', async () => {
    const { ctx, apk } = await machine();
    apk.locked = true;

    const failure = await refusalOf(applier.apply({ shape: 'package', name: 'demo' }, ctx), PackageDatabaseLocked);

    expect(failure.retryable).toBe(true);
    expect(failure.message).toContain('Unable to lock database');
  });

  test('a directory source adds that repository, unsigned, to the apk command', async () => {
    const { ctx, apk } = await machine();
    const fromDirectory = packageApplier(new ApkBackend({ source: { kind: 'directory', path: '/srv/mesh-repository' } }));

    await fromDirectory.apply({ shape: 'package', name: 'demo' }, ctx);

    expect(apk.calls[0]).toEqual(['apk', '--root', ctx.root, '--repository', '/srv/mesh-repository', '--allow-untrusted', '--no-progress', 'add', 'demo']);
  });

  test('a root without an apk database is unreadable rather than "not installed"', async () => {
    const { ctx } = await machine();
    await rm(join(ctx.root, 'lib/apk'), { recursive: true });

    const observation = await applier.observe({ shape: 'package', name: 'demo' }, ctx);

    expect(observation.unreadable).toMatch(/no apk database at .*lib\/apk\/db\/installed/);
  });
});
