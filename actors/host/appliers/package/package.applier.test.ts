import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyContext } from '../applier';
import { ProcessRunner } from '../../../shared/process/command-runner';
import type { PackageBackend } from './package-backend';
import { packageApplier } from './package.applier';
import { PackageDatabaseUnreadable } from './package-errors';

/** A package database in memory: what `installed` reads, what `install` writes, and each install asked for. */
class FakePackageBackend implements PackageBackend {
  readonly manager = 'apt' as const;
  readonly database = new Map<string, string>();
  readonly installs: Array<[string, string | undefined]> = [];
  unreadable: string | undefined;
  /** What the next install says about where the package came from. */
  note: string | undefined;

  async installed(name: string): Promise<string | undefined> {
    if (this.unreadable !== undefined) throw new PackageDatabaseUnreadable(this.unreadable);
    return this.database.get(name);
  }

  async install(name: string, version: string | undefined): Promise<string | undefined> {
    this.installs.push([name, version]);
    this.database.set(name, version ?? 'latest');
    return this.note;
  }

  describe(): string {
    return 'a fake package database';
  }
}

let scratch: string;
let ctx: ApplyContext;

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'package-applier-'));
  ctx = { root: join(scratch, 'root'), stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('packageApplier', () => {
  test('puts what the package manager said about where a package came from in the apply\'s output, and nothing otherwise', async () => {
    const backend = new FakePackageBackend();
    const applier = packageApplier(backend);
    expect(await applier.apply({ shape: 'package', name: 'nginx', version: '1.24.0-1' }, ctx)).toEqual({});
    backend.note = 'installed nginx 1.22.1-9 from the package cache (/var/cache/pacman/pkg/nginx-1.22.1-9-x86_64.pkg.tar.zst)';
    expect(await applier.apply({ shape: 'package', name: 'nginx', version: '1.22.1-9' }, ctx)).toEqual({ output: backend.note });
  });

  test('says "not installed" for a package the database does not have', async () => {
    const applier = packageApplier(new FakePackageBackend());

    expect(await applier.observe({ shape: 'package', name: 'nginx' }, ctx)).toEqual({ present: false, differences: ['not installed'] });
  });

  test('names both versions when another version is installed, and accepts any version when none is declared', async () => {
    const backend = new FakePackageBackend();
    backend.database.set('nginx', '1.22.1-9');
    const applier = packageApplier(backend);

    expect(await applier.observe({ shape: 'package', name: 'nginx', version: '1.24.0-1' }, ctx)).toEqual({
      present: true,
      differences: ['version 1.22.1-9 installed, declared 1.24.0-1'],
    });
    expect(await applier.observe({ shape: 'package', name: 'nginx' }, ctx)).toEqual({ present: true, differences: [] });
  });

  test('applies by installing the declared name and version through the backend', async () => {
    const backend = new FakePackageBackend();

    await packageApplier(backend).apply({ shape: 'package', name: 'nginx', version: '1.24.0-1' }, ctx);

    expect(backend.installs).toEqual([['nginx', '1.24.0-1']]);
  });

  test('an unreadable database is reported as unreadable and never as a match', async () => {
    const backend = new FakePackageBackend();
    backend.unreadable = 'dpkg-query could not read /var/lib/dpkg';

    const observation = await packageApplier(backend).observe({ shape: 'package', name: 'nginx' }, ctx);

    expect(observation.unreadable).toBe('dpkg-query could not read /var/lib/dpkg');
    expect(observation.differences).toEqual(['cannot read the package database: dpkg-query could not read /var/lib/dpkg']);
  });

  test('forgets an undeclared package: it is neither installed nor uninstalled', async () => {
    const backend = new FakePackageBackend();
    backend.database.set('containerd', '1.6.20-1');

    expect(await packageApplier(backend).remove('package:containerd', ctx)).toBe('forgotten');

    expect(backend.database.get('containerd')).toBe('1.6.20-1');
    expect(backend.installs).toEqual([]);
  });

  test('keeps the installed version in a small JSON file and returns its path', async () => {
    const backend = new FakePackageBackend();
    backend.database.set('nginx', '1.22.1-9');
    const dir = join(ctx.stateDir, 'originals', 'generation-7');

    const path = await packageApplier(backend).keepOriginal({ shape: 'package', name: 'nginx', version: '1.24.0-1' }, ctx, dir);

    expect(path).toBe(join(dir, 'package-nginx.json'));
    expect(JSON.parse(await readFile(join(dir, 'package-nginx.json'), 'utf8'))).toEqual({
      shape: 'package',
      name: 'nginx',
      version: '1.22.1-9',
      package_manager: 'apt',
    });
  });
});
