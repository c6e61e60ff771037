/**
 * `npm run build:packages`: the host's Debian and Arch packages, from the release tarballs that
 * `npm run build:host` left in dist/ (built first when missing).
 *
 *   dist/nox-mesh-host_<version>-<release>_amd64.deb          dpkg-deb, from packaging/debian
 *   dist/nox-mesh-host-<version>-<release>-x86_64.pkg.tar.zst makepkg, from packaging/PKGBUILD
 *
 * Debian's package is assembled by hand and built with dpkg-deb rather than through debhelper:
 * its maintainer scripts must never restart the host on upgrade (the host is what upgrades
 * itself, and it exits by itself when done), which is the opposite of what dh_installsystemd
 * writes. Arch's is built by the real makepkg (Debian's pacman-package-manager carries it) from
 * the PKGBUILD, run as `nobody` when this runs as root, because makepkg refuses root. Alpine's
 * APKBUILD needs abuild, which Debian does not have: when the Alpine release tarball is in dist/
 * (build-host with `--node alpine=PATH`), the recipe is written to dist/alpine/ with its sources
 * and its checksums filled, for `abuild -r` on an Alpine machine; packaging/APKBUILD says why
 * there is usually none.
 *
 * Usage: node scripts/run-ts.cjs scripts/build-packages.ts [--out DIR] [--release N] [--fast]
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildHost, projectVersion, REPOSITORY, tarballName } from './build-host';
import { writeCliDocs } from './cli-docs';
import { scriptArguments, wholeNumberOption } from './script-arguments';

const exec = promisify(execFile);

/** The packaging folder: PKGBUILD, debian/, the units. */
export const PACKAGING = path.join(REPOSITORY, 'packaging');

/** Files of packaging/ that the packages install, beside the tarball's members. */
const PACKAGING_SOURCES = ['nox-mesh-host.service', 'nox-mesh-host-resume.service', 'nox-mesh-host-network.sh', 'copyright'];

/** The members every release tarball has. */
const TARBALL_MEMBERS = ['nox-mesh-host', 'nox-mesh-host-launch', 'nox-mesh-host-rouse'];

/** What a package build is given. */
export interface PackageBuildOptions {
  /** The release tarball of the package's system (see build-host). */
  tarball: string;
  /** The program version (`0.1.0`). */
  version: string;
  /** The package release, 1 or more. */
  release: number;
  outDir: string;
  /** Light compression, for tests: the packages are the same but larger and built in a moment. */
  fast?: boolean;
}

/** One line of packaging/debian/layout: a file to install or a symbolic link to make. */
export type LayoutEntry =
  | { kind: 'file'; mode: number; source: string; destination: string }
  | { kind: 'link'; target: string; destination: string };

/** Reads packaging/debian/layout (see the file's comment). */
export async function readDebianLayout(): Promise<LayoutEntry[]> {
  const text = await fs.readFile(path.join(PACKAGING, 'debian', 'layout'), 'utf8');
  const entries: LayoutEntry[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [first, second, third, ...rest] = line.split(/\s+/);
    if (third === undefined || rest.length > 0) throw new Error(`packaging/debian/layout line ${index + 1} is not "MODE SOURCE DESTINATION" or "link TARGET DESTINATION": ${line}`);
    if (first === 'link') entries.push({ kind: 'link', target: second as string, destination: third });
    else if (/^0[0-7]{3}$/.test(first as string)) entries.push({ kind: 'file', mode: parseInt(first as string, 8), source: second as string, destination: third });
    else throw new Error(`packaging/debian/layout line ${index + 1} has mode ${JSON.stringify(first)}; write it as four octal digits, like 0755`);
  }
  return entries;
}

/** The tarball's members and the packaging sources, side by side in `dir`. */
async function gatherSources(tarball: string, dir: string): Promise<void> {
  await run('tar', ['-xzf', path.resolve(tarball), '-C', dir], 'unpacking the release tarball');
  for (const member of TARBALL_MEMBERS) {
    await fs.access(path.join(dir, member)).catch(() => {
      throw new Error(`${tarball} has no ${member}; build it with npm run build:host`);
    });
  }
  for (const file of PACKAGING_SOURCES) await fs.copyFile(path.join(PACKAGING, file), path.join(dir, file));
  await writeCliDocs('nox-mesh-host', dir);
}

/**
 * DEBIAN/md5sums for the package staged in `staging`: `<md5>  <path>` for every regular file
 * but the conffiles (`conffiles`, absolute paths), as dh_md5sums writes it. dpkg records it, and
 * `dpkg --verify` and debsums check the installed files against it; a conffile's sum is kept by
 * dpkg from the conffiles list instead.
 */
export async function debianMd5sums(staging: string, conffiles: readonly string[]): Promise<string> {
  const skipped = new Set(conffiles.map((file) => file.replace(/^\//, '')));
  const lines: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(staging, full);
      if (relative === 'DEBIAN') continue;
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && !skipped.has(relative)) lines.push(`${createHash('md5').update(await fs.readFile(full)).digest('hex')}  ${relative}`);
    }
  };
  await walk(staging);
  return lines.sort((a, b) => (a.slice(34) < b.slice(34) ? -1 : 1)).map((line) => `${line}\n`).join('');
}

/**
 * Builds the Debian package with dpkg-deb and returns its path: the tarball's files placed as
 * packaging/debian/layout says (the copyright file among them), control from
 * packaging/debian/control with the version and installed size filled in, md5sums of the files,
 * and the maintainer scripts beside it.
 */
export async function buildDebianPackage(options: PackageBuildOptions): Promise<string> {
  const version = `${options.version}-${options.release}`;
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'build-deb-'));
  try {
    const sources = path.join(work, 'sources');
    const staging = path.join(work, 'package');
    await fs.mkdir(sources);
    await fs.mkdir(path.join(staging, 'DEBIAN'), { recursive: true, mode: 0o755 });
    await gatherSources(options.tarball, sources);
    let bytes = 0;
    for (const entry of await readDebianLayout()) {
      const destination = path.join(staging, entry.destination);
      await fs.mkdir(path.dirname(destination), { recursive: true, mode: 0o755 });
      if (entry.kind === 'link') {
        await fs.symlink(entry.target, destination);
        continue;
      }
      await fs.copyFile(path.join(sources, entry.source), destination);
      await fs.chmod(destination, entry.mode);
      bytes += (await fs.stat(destination)).size;
    }
    const control = (await fs.readFile(path.join(PACKAGING, 'debian', 'control'), 'utf8'))
      .replace('@VERSION@', version)
      .replace('@INSTALLED_SIZE@', String(Math.ceil(bytes / 1024)));
    await fs.writeFile(path.join(staging, 'DEBIAN', 'control'), control, { mode: 0o644 });
    await fs.copyFile(path.join(PACKAGING, 'debian', 'conffiles'), path.join(staging, 'DEBIAN', 'conffiles'));
    await fs.chmod(path.join(staging, 'DEBIAN', 'conffiles'), 0o644);
    const conffiles = (await fs.readFile(path.join(PACKAGING, 'debian', 'conffiles'), 'utf8')).split('\n').map((line) => line.trim()).filter((line) => line !== '');
    await fs.writeFile(path.join(staging, 'DEBIAN', 'md5sums'), await debianMd5sums(staging, conffiles), { mode: 0o644 });
    for (const script of ['postinst', 'prerm']) {
      await fs.copyFile(path.join(PACKAGING, 'debian', script), path.join(staging, 'DEBIAN', script));
      await fs.chmod(path.join(staging, 'DEBIAN', script), 0o755);
    }
    // A temporary folder is 0700, and a package's root directory becomes the machine's "/".
    await fs.chmod(staging, 0o755);
    await fs.mkdir(options.outDir, { recursive: true });
    const file = path.resolve(options.outDir, `nox-mesh-host_${version}_amd64.deb`);
    const compression = options.fast ? ['-Zgzip', '-z1'] : ['-Zxz'];
    await run('dpkg-deb', ['--root-owner-group', ...compression, '--build', staging, file], 'dpkg-deb --build');
    return file;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/**
 * Builds the Arch package with makepkg from packaging/PKGBUILD (pkgver and pkgrel set to the
 * version being built) and returns its path. makepkg refuses to run as root, so as root it runs
 * as `nobody` over a build folder that user owns. Dependencies are not checked (`--nodeps`):
 * this is not an Arch machine, and the package contains nothing that was compiled here.
 */
export async function buildArchPackage(options: PackageBuildOptions): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'build-pkg-'));
  try {
    const pkgbuild = (await fs.readFile(path.join(PACKAGING, 'PKGBUILD'), 'utf8'))
      .replace(/^pkgver=.*$/m, `pkgver=${options.version}`)
      .replace(/^pkgrel=.*$/m, `pkgrel=${options.release}`);
    await fs.writeFile(path.join(work, 'PKGBUILD'), pkgbuild);
    await fs.copyFile(options.tarball, path.join(work, tarballName('arch', options.version)));
    for (const file of PACKAGING_SOURCES) await fs.copyFile(path.join(PACKAGING, file), path.join(work, file));
    await writeCliDocs('nox-mesh-host', work);
    // The system's makepkg.conf, with the package format Arch uses (Debian's default is .gz).
    const level = options.fast ? '-1' : '-19';
    await fs.writeFile(path.join(work, 'makepkg.conf'), [
      'source /etc/makepkg.conf',
      "PKGEXT='.pkg.tar.zst'",
      `COMPRESSZST=(zstd -c -z -q -T0 ${level} -)`,
      '',
    ].join('\n'));
    // makepkg lists the build machine's installed pacman packages in .BUILDINFO. Here there are
    // none, and pacman would complain that the database it looks for does not exist.
    await fs.mkdir(path.join(work, 'pacman-db'));
    await fs.writeFile(path.join(work, 'pacman'), `#!/bin/sh\nexec pacman --dbpath '${path.join(work, 'pacman-db')}' "$@"\n`, { mode: 0o755 });
    const env = {
      ...process.env,
      PKGDEST: work,
      SRCDEST: work,
      SRCPKGDEST: work,
      LOGDEST: work,
      BUILDDIR: path.join(work, 'build'),
      PACMAN: path.join(work, 'pacman'),
      PACKAGER: 'Novox Mesh <packaging@novox.invalid>',
      LC_ALL: 'C',
    };
    const makepkg = ['makepkg', '--config', path.join(work, 'makepkg.conf'), '--nodeps', '--skipinteg', '--noconfirm', '--noprogressbar', '--force'];
    if (process.getuid?.() === 0) {
      await fs.chmod(work, 0o755);
      const nobody = await userIds('nobody');
      await chownTree(work, nobody.uid, nobody.gid);
      await run('runuser', ['-u', 'nobody', '--', 'env', ...Object.entries(env).filter(([key]) => PASSED_TO_MAKEPKG.has(key)).map(([key, value]) => `${key}=${value}`), ...makepkg], 'makepkg', work);
    } else {
      await run(makepkg[0] as string, makepkg.slice(1), 'makepkg', work, env);
    }
    const name = `nox-mesh-host-${options.version}-${options.release}-x86_64.pkg.tar.zst`;
    await fs.mkdir(options.outDir, { recursive: true });
    const file = path.resolve(options.outDir, name);
    await fs.copyFile(path.join(work, name), file);
    return file;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** The files of packaging/ the APKBUILD lists in `source`, beside the release tarball. */
const ALPINE_SOURCES = ['nox-mesh-host.openrc', 'nox-mesh-host-resume.elogind', 'nox-mesh-host-network.sh'];

/**
 * Writes the Alpine recipe into `outDir` (normally dist/alpine/): packaging/APKBUILD with pkgver
 * and pkgrel set (Alpine counts releases from 0) and `sha512sums` filled in as `abuild checksum`
 * writes it, the release tarball under the name the recipe's `source` gives it, and the other
 * sources. Returns the recipe's path. `abuild -r` there builds the APK on an Alpine machine.
 */
export async function writeAlpineRecipe(options: PackageBuildOptions): Promise<string> {
  await fs.mkdir(options.outDir, { recursive: true });
  const tarball = tarballName('alpine', options.version);
  await fs.copyFile(options.tarball, path.join(options.outDir, tarball));
  for (const file of ALPINE_SOURCES) await fs.copyFile(path.join(PACKAGING, file), path.join(options.outDir, file));
  const sums: string[] = [];
  for (const file of [tarball, ...ALPINE_SOURCES]) {
    sums.push(`${createHash('sha512').update(await fs.readFile(path.join(options.outDir, file))).digest('hex')}  ${file}`);
  }
  const template = await fs.readFile(path.join(PACKAGING, 'APKBUILD'), 'utf8');
  if (!/^sha512sums=""$/m.test(template)) throw new Error('packaging/APKBUILD no longer ends with an empty sha512sums="" line for the build to fill: put it back, or change writeAlpineRecipe in scripts/build-packages.ts');
  const recipe = template
    .replace(/^pkgver=.*$/m, `pkgver=${options.version}`)
    .replace(/^pkgrel=.*$/m, `pkgrel=${options.release - 1}`)
    .replace(/^sha512sums=""$/m, `sha512sums="\n${sums.join('\n')}\n"`);
  const file = path.join(options.outDir, 'APKBUILD');
  await fs.writeFile(file, recipe);
  return file;
}

/** The environment makepkg is given when it runs as another user (runuser starts it afresh). */
const PASSED_TO_MAKEPKG = new Set(['PKGDEST', 'SRCDEST', 'SRCPKGDEST', 'LOGDEST', 'BUILDDIR', 'PACMAN', 'PACKAGER', 'LC_ALL', 'PATH', 'SOURCE_DATE_EPOCH']);

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const uid = Number((await exec('id', ['-u', name])).stdout.trim());
  const gid = Number((await exec('id', ['-g', name])).stdout.trim());
  return { uid, gid };
}

async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await fs.chown(dir, uid, gid);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid, gid);
    else await fs.lchown(child, uid, gid);
  }
}

async function run(program: string, args: string[], doing: string, cwd?: string, env?: NodeJS.ProcessEnv): Promise<void> {
  try {
    await exec(program, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string };
    const said = `${failure.stderr ?? ''}\n${failure.stdout ?? ''}`.trim().split('\n').slice(-12).join('\n');
    throw new Error(`${doing} failed: ${said || failure.message}`, { cause: error });
  }
}

/** Reads the command line (see the file's comment). */
export function parseArguments(argv: readonly string[]): { outDir: string; release: number; fast: boolean } {
  const given = scriptArguments(argv, {
    out: { type: 'string' },
    release: { type: 'string' },
    fast: { type: 'boolean' },
  }, 'build-packages [--out DIR] [--release N] [--fast]');
  return {
    outDir: path.resolve(given.out ?? path.join(REPOSITORY, 'dist')),
    release: given.release === undefined ? 1 : wholeNumberOption('--release', given.release),
    fast: given.fast ?? false,
  };
}

async function main(): Promise<void> {
  const options = parseArguments(process.argv.slice(2));
  const version = await projectVersion();
  const tarballOf = (system: 'debian' | 'arch') => path.join(options.outDir, tarballName(system, version));
  const missing = (['debian', 'arch'] as const).filter((system) => !existsSync(tarballOf(system)));
  if (missing.length > 0) {
    process.stdout.write(`no release tarball for ${missing.join(' and ')} in ${options.outDir}: building the host first\n`);
    await buildHost({ outDir: options.outDir, systems: missing, release: options.release });
  }
  for (const [system, build] of [['debian', buildDebianPackage], ['arch', buildArchPackage]] as const) {
    const started = performance.now();
    const file = await build({ tarball: tarballOf(system), version, release: options.release, outDir: options.outDir, fast: options.fast });
    const bytes = (await fs.stat(file)).size;
    process.stdout.write(`${path.relative(process.cwd(), file) || file}  ${(bytes / 1024 / 1024).toFixed(1)} MB  ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  const alpineTarball = path.join(options.outDir, tarballName('alpine', version));
  if (existsSync(alpineTarball)) {
    const recipe = await writeAlpineRecipe({ tarball: alpineTarball, version, release: options.release, outDir: path.join(options.outDir, 'alpine') });
    process.stdout.write(`${path.relative(process.cwd(), recipe) || recipe}  with its sources and checksums: run abuild -r there on an Alpine machine\n`);
  } else {
    process.stdout.write(`no Alpine recipe: there is no ${path.basename(alpineTarball)} (build-host needs a musl Node, --node alpine=PATH; see packaging/APKBUILD)\n`);
  }
}

// Run as a script (node scripts/run-ts.cjs scripts/build-packages.ts), not when a test imports it.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  main().catch((error: unknown) => {
    process.stderr.write(`build-packages: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
