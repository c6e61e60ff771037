/**
 * `node scripts/run-ts.cjs scripts/build-controller.ts`: the controller's Debian package.
 *
 *   dist/mesh-control_<version>-<release>_all.deb     dpkg-deb, from packaging/controller
 *
 * The controller is bundled into one CommonJS file by esbuild and run by the machine's Node
 * (the package depends on nodejs >= 20 and on nats-server, whose binary the broker's unit runs).
 * Two parts stay files beside the bundle: the store's migrations, read from a folder, and
 * PGlite, which finds its WebAssembly and data files beside its own module and so is loaded as
 * itself from usr/lib/mesh-control/node_modules. The package is assembled by hand and built
 * with dpkg-deb, as the host's is (scripts/build-packages.ts); it carries md5sums and a
 * copyright file. It enables and starts nothing: a mesh has to be made (`mesh-control init`)
 * before its broker or controller can run, and that is the operator's step, or the first node's
 * bundle's (`nox-mesh-host reconcile`). Removing it stops and disables both (debian/prerm).
 *
 * Usage: node scripts/run-ts.cjs scripts/build-controller.ts [--out DIR] [--release N] [--fast]
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { projectVersion, REPOSITORY } from './build-host';
import { debianMd5sums } from './build-packages';
import { writeCliDocs } from './cli-docs';
import { scriptArguments, wholeNumberOption } from './script-arguments';

const exec = promisify(execFile);

/** The controller's packaging folder: units, OpenRC scripts, the /usr/bin wrapper, debian/. */
export const CONTROLLER_PACKAGING = path.join(REPOSITORY, 'packaging', 'controller');

/** The Debian package's name. */
export const CONTROLLER_PACKAGE = 'mesh-control';

/** What a controller package build is given. */
export interface ControllerPackageOptions {
  /** The program version (`0.1.0`). */
  version: string;
  /** The package release, 1 or more. */
  release: number;
  outDir: string;
  /** Light compression, for tests: the same package, larger, built in a moment. */
  fast?: boolean;
}

/** One line of packaging/controller/debian/layout. */
interface ControllerLayoutEntry {
  mode: number;
  source: string;
  destination: string;
}

/** Reads packaging/controller/debian/layout (see the file's comment). */
export async function readControllerLayout(): Promise<ControllerLayoutEntry[]> {
  const text = await fs.readFile(path.join(CONTROLLER_PACKAGING, 'debian', 'layout'), 'utf8');
  const entries: ControllerLayoutEntry[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [mode, source, destination, ...rest] = line.split(/\s+/);
    if (destination === undefined || rest.length > 0 || !/^0[0-7]{3}$/.test(mode as string)) {
      throw new Error(`packaging/controller/debian/layout line ${index + 1} is not "MODE SOURCE DESTINATION" with MODE like 0755: ${line}`);
    }
    entries.push({ mode: parseInt(mode as string, 8), source: source as string, destination });
  }
  return entries;
}

/**
 * Bundles the controller's CLI (actors/controller/cli/main.ts) into `outFile`: everything but
 * PGlite (loaded from node_modules beside the bundle) and pg's optional native binding (never
 * installed). The version is baked in, and the migrations folder is looked for beside the file.
 */
export async function bundleController(options: { outFile: string; version: string }): Promise<void> {
  await build({
    stdin: {
      contents: "require('./actors/controller/cli/main').main();\n",
      resolveDir: REPOSITORY,
      sourcefile: 'mesh-control-entry.js',
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: options.outFile,
    external: ['@electric-sql/pglite', 'pg-native'],
    define: {
      MESH_BUILD_VERSION: JSON.stringify(options.version),
      MESH_BUILD_MIGRATIONS_DIR: JSON.stringify('migrations'),
    },
    // Not minified: a stack trace from a machine names the line, and error class names stay.
    minify: false,
    legalComments: 'eof',
    logLevel: 'silent',
  });
}

/**
 * Builds the controller's Debian package with dpkg-deb and returns its path: the bundle, the
 * migrations and PGlite placed as packaging/controller/debian/layout says, control with the
 * version and installed size filled in, md5sums of every file.
 */
export async function buildControllerPackage(options: ControllerPackageOptions): Promise<string> {
  const version = `${options.version}-${options.release}`;
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'build-controller-'));
  try {
    const sources = path.join(work, 'sources');
    const staging = path.join(work, 'package');
    await fs.mkdir(sources);
    await fs.mkdir(path.join(staging, 'DEBIAN'), { recursive: true, mode: 0o755 });
    await bundleController({ outFile: path.join(sources, 'mesh-control.cjs'), version: options.version });
    await fs.cp(path.join(REPOSITORY, 'migrations'), path.join(sources, 'migrations'), { recursive: true });
    // Its package.json exports no subpath to resolve it by: the installed folder, as npm left it.
    // Source maps and type declarations are for its developers: 6 MB no machine reads.
    await fs.cp(path.join(REPOSITORY, 'node_modules', '@electric-sql', 'pglite'), path.join(sources, 'pglite'), {
      recursive: true,
      dereference: true,
      filter: (source) => !/\.(?:map|d\.c?ts)$/.test(source),
    });
    for (const name of await fs.readdir(CONTROLLER_PACKAGING)) {
      if (name !== 'debian') await fs.copyFile(path.join(CONTROLLER_PACKAGING, name), path.join(sources, name));
    }
    await fs.copyFile(path.join(CONTROLLER_PACKAGING, 'debian', 'copyright'), path.join(sources, 'copyright'));
    await writeCliDocs('mesh-control', sources);

    let bytes = 0;
    const place = async (from: string, to: string, mode: number): Promise<void> => {
      await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o755 });
      await fs.copyFile(from, to);
      await fs.chmod(to, mode);
      bytes += (await fs.stat(to)).size;
    };
    for (const entry of await readControllerLayout()) {
      const from = path.join(sources, entry.source.replace(/\/$/, ''));
      const to = path.join(staging, entry.destination);
      if (!entry.source.endsWith('/')) {
        await place(from, to, entry.mode);
        continue;
      }
      for (const file of await filesUnder(from)) await place(path.join(from, file), path.join(to, file), entry.mode);
    }
    const control = (await fs.readFile(path.join(CONTROLLER_PACKAGING, 'debian', 'control'), 'utf8'))
      .replace('@VERSION@', version)
      .replace('@INSTALLED_SIZE@', String(Math.ceil(bytes / 1024)));
    await fs.writeFile(path.join(staging, 'DEBIAN', 'control'), control, { mode: 0o644 });
    // The package has no conffiles: /etc holds nothing of it.
    await fs.writeFile(path.join(staging, 'DEBIAN', 'md5sums'), await debianMd5sums(staging, []), { mode: 0o644 });
    await fs.copyFile(path.join(CONTROLLER_PACKAGING, 'debian', 'prerm'), path.join(staging, 'DEBIAN', 'prerm'));
    await fs.chmod(path.join(staging, 'DEBIAN', 'prerm'), 0o755);
    // A temporary folder is 0700, and a package's root directory becomes the machine's "/".
    await fs.chmod(staging, 0o755);
    await fs.mkdir(options.outDir, { recursive: true });
    const file = path.resolve(options.outDir, `${CONTROLLER_PACKAGE}_${version}_all.deb`);
    const compression = options.fast ? ['-Zgzip', '-z1'] : ['-Zxz'];
    try {
      await exec('dpkg-deb', ['--root-owner-group', ...compression, '--build', staging, file], { maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      throw new Error(`dpkg-deb --build failed: ${((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`, { cause: error });
    }
    return file;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** Every regular file under `dir`, relative to it, in a stable order. */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(path.relative(dir, path.join(entry.parentPath, entry.name)));
  }
  return found.sort();
}

/** Reads the command line (see the file's comment). */
export function parseControllerArguments(argv: readonly string[]): { outDir: string; release: number; fast: boolean } {
  const given = scriptArguments(argv, {
    out: { type: 'string' },
    release: { type: 'string' },
    fast: { type: 'boolean' },
  }, 'build-controller [--out DIR] [--release N] [--fast]');
  return {
    outDir: path.resolve(given.out ?? path.join(REPOSITORY, 'dist')),
    release: given.release === undefined ? 1 : wholeNumberOption('--release', given.release),
    fast: given.fast ?? false,
  };
}

async function main(): Promise<void> {
  const options = parseControllerArguments(process.argv.slice(2));
  const started = performance.now();
  const file = await buildControllerPackage({ ...options, version: await projectVersion() });
  const bytes = (await fs.stat(file)).size;
  process.stdout.write(`${path.relative(process.cwd(), file) || file}  ${(bytes / 1024 / 1024).toFixed(1)} MB  ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

// Run as a script, not when a test imports it.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  main().catch((error: unknown) => {
    process.stderr.write(`build-controller: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
