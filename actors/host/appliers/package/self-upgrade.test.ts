import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ProcessRunner } from '../../../shared/process/command-runner';
import { readRestartDue } from '../../launch-state/restart-due';
import type { ApplyContext } from '../applier';
import type { PackageBackend } from './package-backend';
import { PackageNotInRepository } from './package-errors';
import { packageApplier } from './package.applier';
import { HOST_BINARY, NewHostDoesNotRun } from './self-upgrade';

// The host's own package through the package applier. The package database is a small fake
// whose "install" writes the release's binary into a temporary root; the binaries are real
// files run by the real runner, so the kernel's own refusals (not a program, no interpreter)
// are what the check meets.

/** One release of the host's package: the file it installs as the host binary. */
interface Release {
  text: string | Buffer;
  mode?: number;
}

const OLD_HOST = `#!/bin/sh
[ "$1" = version ] && { echo "nox-mesh-host 0.1.0"; exit 0; }
exit 2
`;

/** Installs releases by writing their binary under the root; remembers every install. */
class FakeHostPackages implements PackageBackend {
  readonly manager = 'apt' as const;
  readonly database = new Map<string, string>();
  readonly installs: Array<[string, string | undefined]> = [];
  readonly releases = new Map<string, Release>();
  /** Versions whose install fails as if the repository no longer had them. */
  readonly gone = new Set<string>();

  constructor(private readonly binary: string) {}

  async installed(name: string): Promise<string | undefined> {
    return this.database.get(name);
  }

  async install(name: string, version: string | undefined, ctx: ApplyContext): Promise<string | undefined> {
    this.installs.push([name, version]);
    const release = version === undefined ? undefined : this.releases.get(version);
    if (version === undefined || release === undefined || this.gone.has(version)) {
      throw new PackageNotInRepository(name, version, this.describe(), { said: 'E: Version not found', program: 'apt-get', next: 'publish it' });
    }
    const file = join(ctx.root, this.binary);
    await mkdir(dirname(file), { recursive: true });
    await rm(file, { force: true });
    await writeFile(file, release.text);
    await chmod(file, release.mode ?? 0o755);
    this.database.set(name, version);
    return undefined;
  }

  describe(): string {
    return 'a fake package database';
  }
}

/** The first bytes of a 64-bit little-endian ELF executable for `machine` (62 x86-64, 183 AArch64). */
function elfHeaderFor(machine: number): Buffer {
  const header = Buffer.alloc(64);
  header.write('\x7fELF', 0, 'latin1');
  header[4] = 2; // 64-bit
  header[5] = 1; // little-endian
  header[6] = 1; // ELF version
  header.writeUInt16LE(2, 16); // an executable
  header.writeUInt16LE(machine, 18);
  return header;
}

let scratch: string;
let ctx: ApplyContext;
let packages: FakeHostPackages;

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'self-upgrade-'));
  ctx = { root: join(scratch, 'root'), stateDir: join(scratch, 'state'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host' };
  packages = new FakeHostPackages(HOST_BINARY);
  packages.releases.set('0.1.0-1', { text: OLD_HOST });
  await packages.install('nox-mesh-host', '0.1.0-1', ctx);
  packages.installs.length = 0;
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const upgrade = { shape: 'package', name: 'nox-mesh-host', version: '0.2.0-1' } as const;

/** Applies the upgrade to `release` and returns the failure it ended in. */
async function failedUpgradeTo(release: Release): Promise<NewHostDoesNotRun> {
  packages.releases.set('0.2.0-1', release);
  const failure = await packageApplier(packages).apply(upgrade, ctx).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(NewHostDoesNotRun);
  return failure as NewHostDoesNotRun;
}

describe("the host's own package", () => {
  test('installs a binary that answers its version, and marks the restart due', async () => {
    packages.releases.set('0.2.0-1', { text: OLD_HOST.replace('0.1.0', '0.2.0') });

    const outcome = await packageApplier(packages).apply(upgrade, ctx);

    expect(packages.installs).toEqual([['nox-mesh-host', '0.2.0-1']]);
    expect(outcome.output).toBe('the new binary runs here (it said "nox-mesh-host 0.2.0"); the host restarts onto it once this pass is reported\n');
    expect(await readRestartDue(ctx.stateDir)).toBe('nox-mesh-host 0.2.0, package 0.2.0-1');
  });

  test('fails the apply when the new binary is not a program this machine can execute, and puts the old version back', async () => {
    const failure = await failedUpgradeTo({ text: 'this is a text file, not a program\n' });

    expect(failure.reason).toBe('it is not a program: neither an ELF executable nor a script');
    expect(failure.message).toContain(`installed package "nox-mesh-host" version "0.2.0-1", but its binary ${HOST_BINARY} does not run here`);
    expect(failure.message).toContain('so the host will not restart onto it and keeps running');
    expect(packages.installs).toEqual([['nox-mesh-host', '0.2.0-1'], ['nox-mesh-host', '0.1.0-1']]);
    expect(packages.database.get('nox-mesh-host')).toBe('0.1.0-1');
    expect(await readFile(join(ctx.root, HOST_BINARY), 'utf8')).toBe(OLD_HOST);
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });

  test('fails the apply when the new binary is built for another architecture, and says which', async () => {
    const failure = await failedUpgradeTo({ text: elfHeaderFor(process.arch === 'arm64' ? 62 : 183) });

    expect(failure.reason).toBe(`it is built for another architecture (${process.arch === 'arm64' ? 'x64' : 'arm64'}), and this machine is ${process.arch}`);
    expect(packages.database.get('nox-mesh-host')).toBe('0.1.0-1');
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });

  test('fails the apply when the new binary exits non-zero, quoting what it said', async () => {
    const failure = await failedUpgradeTo({ text: '#!/bin/sh\necho "cannot load libfoo.so.3" >&2\nexit 1\n' });

    expect(failure.reason).toBe(`${join(ctx.root, HOST_BINARY)} version: exited 1: cannot load libfoo.so.3`);
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });

  test('fails the apply when the loader the new binary names is missing, as with a libc this machine lacks', async () => {
    const failure = await failedUpgradeTo({ text: '#!/lib/ld-musl-x86_64.so.1.missing\n' });

    expect(failure.reason).toMatch(/^it, or the dynamic loader it names \(a libc this machine does not have\), is missing \(.*ENOENT\)$/);
  });

  test('fails the apply when the new binary is not executable', async () => {
    const failure = await failedUpgradeTo({ text: OLD_HOST, mode: 0o644 });

    expect(failure.reason).toMatch(/^it is not executable \(.*EACCES\)$/);
  });

  test('fails the apply when the new binary runs but does not answer as the host', async () => {
    const failure = await failedUpgradeTo({ text: '#!/bin/sh\necho "hello"\n' });

    expect(failure.reason).toBe('"version" did not answer as nox-mesh-host: it said "hello"');
  });

  test('says so when the version that was installed before cannot be put back', async () => {
    packages.gone.add('0.1.0-1');

    const failure = await failedUpgradeTo({ text: 'not a program\n' });

    expect(failure.putBack).toMatch(/^putting back version 0\.1\.0-1 failed as well \(package "nox-mesh-host" version "0\.1\.0-1" is not in the repositories/);
    expect(failure.putBack).toMatch(/the launcher rolls back to known-good if the host restarts$/);
  });

  test('says there is nothing to put back when the package was not installed before (a host installed from the tarball)', async () => {
    packages.database.clear();

    const failure = await failedUpgradeTo({ text: 'not a program\n' });

    expect(packages.installs).toEqual([['nox-mesh-host', '0.2.0-1']]);
    expect(failure.putBack).toMatch(/^the package was not installed before, so there is no version to put back/);
  });

  test('runs the binary where it was told the host is installed', async () => {
    packages = new FakeHostPackages('/opt/mesh/bin/host');
    packages.releases.set('0.2.0-1', { text: OLD_HOST.replace('0.1.0', '0.2.0') });
    packages.database.set('nox-mesh-host', '0.1.0-1');

    await packageApplier(packages, { binary: '/opt/mesh/bin/host' }).apply(upgrade, ctx);

    expect(await readRestartDue(ctx.stateDir)).toBe('nox-mesh-host 0.2.0, package 0.2.0-1');
  });

  test('any other package is installed without running anything or marking a restart', async () => {
    packages.releases.set('1.24.0-1', { text: 'nginx\n', mode: 0o644 });

    expect(await packageApplier(packages).apply({ shape: 'package', name: 'nginx', version: '1.24.0-1' }, ctx)).toEqual({});

    expect(packages.installs).toEqual([['nginx', '1.24.0-1']]);
    expect(await readRestartDue(ctx.stateDir)).toBeUndefined();
  });
});
