/**
 * `npm run build:host`: the node host as one file, and as a single executable per system.
 *
 *   dist/nox-mesh-host.cjs                          the host bundled into one CommonJS file; runs
 *                                                   with any Node >= 20 from an empty folder
 *   dist/nox-mesh-host-code-cache.bin              V8's code for the bundle, made by this Node in an
 *                                                   apply, and dist/nox-mesh-host-cached.cjs, which
 *                                                   starts the bundle with it (buildCodeCache)
 *   dist/nox-mesh-host-libsodium.cjs                libsodium, which the bundle loads from its own
 *                                                   folder when it first opens a sealed secret
 *   dist/mesh-host-<system>-<version>-<arch>.tar.gz nox-mesh-host (Node and the host in one
 *                                                   executable), nox-mesh-host-launch and
 *                                                   nox-mesh-host-rouse, flat, for
 *                                                   `tar -xz -C /usr/local/bin`
 *
 * The tarball must never acquire a dependency (seed 000): the mesh's package repository is
 * served by the mesh, so the thing that joins a mesh cannot need one. Hence a Node single
 * executable (SEA): a copy of a Node binary with the bundle injected (postject). It needs what
 * that Node binary needs and nothing more: the C library and the C++ runtime, which every Debian
 * and Arch machine has; on Alpine libstdc++ is a package of its own, unless the Node given for
 * Alpine is linked statically.
 *
 * The binary is per system. Today the systems differ only in the package version baked in (what
 * the host writes to the launcher's `known-good`: `0.1.0-1` on Debian and Arch, `0.1.0-r0` on
 * Alpine) and in the Node it is built on. That Node is never the build machine's: the shipped
 * host carries a runtime in support, the release scripts/fetch-node.ts pins (HOST_RUNTIME_VERSION,
 * fetched from the npm registry and cached in .cache/node/), whatever Node builds it. Debian
 * and Arch take that Node (glibc), so their two executables are the same bytes, built once;
 * Alpine needs a Node built against musl, which the registry does not carry (packaging/APKBUILD
 * says why), given with `--node alpine=PATH`, and is skipped, saying so, without one. The
 * appliers are chosen at run time from the machine's profile.
 *
 * Usage: node scripts/run-ts.cjs scripts/build-host.ts [--out DIR] [--system NAME]...
 *        [--node SYSTEM=PATH]... [--release N] [--bundle-only]
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build, type Metafile, type Plugin } from 'esbuild';
import { fetchNode, HOST_RUNTIME_VERSION } from './fetch-node';
import { scriptArguments, wholeNumberOption } from './script-arguments';
import { withoutIndentation } from './strip-indentation';
import { LIBSODIUM_FILE } from '../actors/shared/crypto/libsodium-beside-bundle';
import { CODE_CACHE_FILE } from '../actors/host/start/code-cache';
import { SEA_BUNDLE_ASSET, SEA_CODE_CACHE_ASSET } from '../actors/host/start/sea-assets';
import { ONE_PASS_FLAGS_FROM } from '../actors/host/cli/one-pass-flags';

const exec = promisify(execFile);

/** The repository's root. */
export const REPOSITORY = path.resolve(__dirname, '..');

/** The systems a host binary is built for. */
export const SYSTEMS = ['debian', 'arch', 'alpine'] as const;
/** One of {@link SYSTEMS}. */
export type HostSystem = (typeof SYSTEMS)[number];

/** The C library a system's binaries are linked against. */
const LIBC: Record<HostSystem, 'glibc' | 'musl'> = { debian: 'glibc', arch: 'glibc', alpine: 'musl' };

/**
 * Packages that must never be in the host bundle: the controller's stores. The host has no
 * database, and PGlite would need its WebAssembly and data files beside the bundle, which a
 * single file cannot have. Matched wherever node_modules is (see packagesOf): in a checkout whose
 * node_modules links to another's, an anchored pattern matched nothing and let anything in.
 */
const CONTROLLER_ONLY = [/^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/@electric-sql\//, /^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/pg\//, /^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/pg-[^/]+\//, /^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/pgpass\//, /^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/postgres-[^/]+\//];

/** The fuse postject flips so that Node runs the injected blob (Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The tarball's members besides the executable: the launcher and the rouse helper, as shipped. */
export const TARBALL_SCRIPTS = {
  'nox-mesh-host-launch': path.join(REPOSITORY, 'launcher', 'nox-mesh-host-launch'),
  'nox-mesh-host-rouse': path.join(REPOSITORY, 'packaging', 'nox-mesh-host-rouse'),
} as const;

/** The version in package.json: the program's version. */
export async function projectVersion(): Promise<string> {
  const pkg = JSON.parse(await fs.readFile(path.join(REPOSITORY, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The version of the host's package on a system, as its package manager writes it: Alpine's
 * releases are `-r<n>` counted from 0, Debian's and Arch's `-<n>` counted from 1. `release` is
 * the Debian/Arch number; Alpine's is one less.
 */
export function packageVersionFor(system: HostSystem, version: string, release = 1): string {
  return system === 'alpine' ? `${version}-r${release - 1}` : `${version}-${release}`;
}

/** `mesh-host-<system>-<version>-<arch>.tar.gz`, the seed's name. */
export function tarballName(system: HostSystem, version: string, arch = 'x86_64'): string {
  return `mesh-host-${system}-${version}-${arch}.tar.gz`;
}

/** What one bundle came to. */
export interface BundleResult {
  file: string;
  bytes: number;
  /** The npm packages inside, by name. */
  packages: string[];
  /** libsodium, built beside the bundle as LIBSODIUM_FILE (see libsodiumBesideBundle). */
  libsodium: { file: string; bytes: number };
  /** The code cache and the start that uses it, when asked for (see buildCodeCache). */
  codeCache?: { file: string; bytes: number; launcher: string };
  ms: number;
}

/** The controller's store was pulled into the host bundle. */
export class ControllerCodeInHostBundle extends Error {
  constructor(found: string[], importers: string[]) {
    super(
      `the host bundle would contain the controller's store (${found.join(', ')}), imported by ${importers.join(', ') || 'an unknown file'}; ` +
        'the host has no database: import the controller-only code from actors/controller only, never from actors/host or actors/shared',
    );
    this.name = 'ControllerCodeInHostBundle';
  }
}

/**
 * Bundles the host (actors/host/cli/main.ts) into one CommonJS file for Node 20 with esbuild.
 * Nothing is left external: the file runs from an empty folder. `packageVersion` is baked in for
 * the launcher's known-good (a system's binary); without it the host reports its program version
 * there. Refuses a bundle that contains the controller's store.
 *
 * The file is written in ASCII and carries zod's English messages only (see escapeNonAscii and
 * englishOnlyZod): V8 keeps a script's whole source in memory for as long as the process runs,
 * so every byte of the bundle is a byte of the running host's memory, twice over if one
 * character in it is not Latin-1. For the same budget it puts zod's methods on its prototypes as
 * plain methods (zodMethodsOnPrototypes), gives clipanion a platform module that does not
 * load `tty` (clipanionPlatformWithoutTty), and leaves out the indentation of every line that is
 * code rather than template text (strip-indentation.ts; lines stay where they were).
 */
export async function bundleHost(options: {
  outFile: string;
  version: string;
  packageVersion?: string;
  minify?: boolean;
  /** The entry's source, resolved from the repository's root. Default: the host's CLI. */
  entry?: string;
  /** Also make the bundle's code cache and its start beside it (buildCodeCache). */
  codeCache?: boolean;
}): Promise<BundleResult> {
  const started = performance.now();
  const define: Record<string, string> = { MESH_BUILD_VERSION: JSON.stringify(options.version) };
  if (options.packageVersion !== undefined) define.MESH_BUILD_PACKAGE_VERSION = JSON.stringify(options.packageVersion);
  const result = await build({
    stdin: {
      contents: options.entry ?? "require('./actors/host/cli/main').main();\n",
      resolveDir: REPOSITORY,
      sourcefile: 'nox-mesh-host-entry.js',
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: options.outFile,
    define,
    // Not minified: a stack trace from a machine names the line. Minifying whitespace would
    // save 0.5 MB of memory and a millisecond of start; minified identifiers would also rename
    // the error classes, whose names are the `condition` of every error printed under --json.
    minify: options.minify ?? false,
    legalComments: 'eof',
    // nkeys signs the login nonce with tweetnacl; the host gives it Node's own Ed25519 instead
    // (actors/shared/crypto/nacl-for-nkeys.ts), 70 kB of JavaScript less to parse and hold.
    alias: { tweetnacl: path.join(REPOSITORY, 'actors', 'shared', 'crypto', 'nacl-for-nkeys.ts') },
    plugins: [englishOnlyZod, zodMethodsOnPrototypes, clipanionPlatformWithoutTty, libsodiumBesideBundle],
    metafile: true,
    logLevel: 'silent',
  });
  const libsodium = await bundleLibsodium(path.join(path.dirname(options.outFile), LIBSODIUM_FILE));
  const inputs = Object.keys(result.metafile.inputs);
  const found = inputs.filter((input) => CONTROLLER_ONLY.some((pattern) => pattern.test(input)));
  if (found.length > 0) {
    await fs.rm(options.outFile, { force: true });
    throw new ControllerCodeInHostBundle(packagesOf(found), importersOf(result.metafile, found));
  }
  const text = await fs.readFile(options.outFile, 'utf8');
  const compact = await withoutIndentation(escapeNonAscii(text));
  if (compact !== text) await fs.writeFile(options.outFile, compact);
  const bytes = (await fs.stat(options.outFile)).size;
  const codeCache = options.codeCache === true ? await buildCodeCache(options.outFile) : undefined;
  return { file: options.outFile, bytes, packages: packagesOf(inputs), libsodium, ...(codeCache === undefined ? {} : { codeCache }), ms: performance.now() - started };
}

/** The start beside the bundle that runs it with its code cache (actors/host/start/cached-start.ts). */
export const CACHED_START_FILE = 'nox-mesh-host-cached.cjs';

/**
 * Files of the apply the code cache is made from: with their directory, fewer than ONE_PASS_FLAGS_FROM resources, so the apply
 * leaves V8's flags as they are. V8 writes the flags of the moment into cached data and refuses it
 * under others: a cache taken after the one-pass flags were set would be refused at every start.
 */
const CODE_CACHE_TRAINING_FILES = ONE_PASS_FLAGS_FROM - 2; // and their directory

/**
 * The bundle's V8 code cache, CODE_CACHE_FILE beside it, and the start that uses it,
 * CACHED_START_FILE (actors/host/start/code-cache.ts says why and what keeps it safe). The cache
 * is what V8 compiled by the end of an apply of a directory and CODE_CACHE_TRAINING_FILES files
 * into a fresh root, run by this Node, the one that built the bundle and runs it from the
 * checkout; another Node's start ignores it. The bundle itself is unchanged and still runs alone
 * (and is what the single executable carries, with Node's own code cache).
 */
export async function buildCodeCache(bundleFile: string): Promise<{ file: string; bytes: number; launcher: string }> {
  const dir = path.dirname(bundleFile);
  const launcher = path.join(dir, CACHED_START_FILE);
  const file = path.join(dir, CODE_CACHE_FILE);
  await build({
    ...START_BUILD,
    stdin: {
      contents: `require('./actors/host/start/cached-start').startCached(__dirname, ${JSON.stringify(path.basename(bundleFile))});\n`,
      resolveDir: REPOSITORY,
      sourcefile: 'nox-mesh-host-cached-entry.js',
      loader: 'js',
    },
    outfile: launcher,
  });
  await trainCodeCache(process.execPath, bundleFile, file);
  // The cache is worth keeping only if this Node takes it: started once, asked to say.
  await expectCacheUsed(process.execPath, [launcher], "the bundle's code cache was made but is not used by the start beside it");
  return { file, bytes: (await fs.stat(file)).size, launcher };
}

/** How the host's starts (the cached start, the executable's main) and the trainer are bundled. */
const START_BUILD = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'silent' } as const;

/** The host's environment for the trainer and the check after it: without NODE_OPTIONS, since V8 refuses a cache made under other flags. */
function cacheEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * Writes `outFile`: what V8 compiled by the end of an apply of a directory and
 * CODE_CACHE_TRAINING_FILES files into a fresh root, run by `node` from the bundle at
 * `bundleFile` (actors/host/start/train-code-cache.ts). Only that Node takes it.
 */
async function trainCodeCache(node: string, bundleFile: string, outFile: string): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'host-code-cache-'));
  try {
    const trainer = path.join(work, 'train-code-cache.cjs');
    await build({ ...START_BUILD, entryPoints: [path.join(REPOSITORY, 'actors', 'host', 'start', 'train-code-cache.ts')], outfile: trainer });
    const declaration = path.join(work, 'declaration.json');
    const resources = [
      { shape: 'directory', path: '/srv/code-cache', mode: '0755', owner: 'root', group: 'root' },
      ...Array.from({ length: CODE_CACHE_TRAINING_FILES }, (_, index) => ({ shape: 'file', path: `/srv/code-cache/file-${index}.conf`, content: { text: `setting_${index} = ${index}\n` }, mode: '0644', owner: 'root', group: 'root' })),
    ];
    await fs.writeFile(declaration, JSON.stringify({ resources }));
    await fs.mkdir(path.join(work, 'root'));
    await fs.rm(outFile, { force: true });
    try {
      await exec(node, [trainer, bundleFile, outFile, 'apply', declaration, '--root', path.join(work, 'root'), '--json'], { cwd: work, env: cacheEnvironment(), maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const failure = error as { stderr?: string; message: string };
      throw new Error(`making the bundle's code cache failed (an apply of ${CODE_CACHE_TRAINING_FILES} files by the bundle under ${node}): ${(failure.stderr || failure.message).trim().slice(0, 800)}`, { cause: error });
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** Runs `version` by `program` asked to say whether it took its code cache, and throws `what` unless it did. */
async function expectCacheUsed(program: string, before: readonly string[], what: string): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'host-code-cache-check-'));
  try {
    const { stderr } = await exec(program, [...before, 'version'], { cwd: work, env: { ...cacheEnvironment(), NOX_MESH_HOST_SAY_CODE_CACHE: '1' } });
    if (stderr.trim() !== 'code cache: used') throw new Error(`${what} (${stderr.trim()}); see actors/host/start/code-cache.ts`);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/**
 * libsodium (libsodium-wrappers and its WebAssembly, as base64 text) is kept out of the host
 * bundle: the name resolves to a module that loads it, on the first sealed box, from the file
 * bundleLibsodium writes beside the bundle, or from the single executable's asset of that name
 * (actors/shared/crypto/libsodium-beside-bundle.ts). Inside, it was 1.5 MB of the bundle's
 * 2.7: parsed at every start and held in memory by every host, for boxes most hosts never get.
 */
export const libsodiumBesideBundle: Plugin = {
  name: 'libsodium-beside-bundle',
  setup(bundler) {
    bundler.onResolve({ filter: /^libsodium-wrappers$/ }, (args) =>
      args.namespace === 'libsodium-beside-bundle' ? undefined : { path: 'libsodium-wrappers', namespace: 'libsodium-beside-bundle' });
    bundler.onLoad({ filter: /.*/, namespace: 'libsodium-beside-bundle' }, () => ({
      contents: `module.exports = require(${JSON.stringify(path.join(REPOSITORY, 'actors', 'shared', 'crypto', 'libsodium-beside-bundle.ts'))}).loadLibsodium();\n`,
      resolveDir: REPOSITORY,
      loader: 'js',
    }));
  },
};

/** libsodium-wrappers as one CommonJS file of its own at `outFile` (see libsodiumBesideBundle). */
async function bundleLibsodium(outFile: string): Promise<{ file: string; bytes: number }> {
  await build({
    stdin: { contents: "module.exports = require('libsodium-wrappers');\n", resolveDir: REPOSITORY, sourcefile: 'libsodium-entry.js', loader: 'js' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: outFile,
    legalComments: 'eof',
    logLevel: 'silent',
  });
  return { file: outFile, bytes: (await fs.stat(outFile)).size };
}

/**
 * `source` with every character outside ASCII written as a `\uXXXX` escape. V8 holds a script's
 * source as Latin-1 when every character fits and as UTF-16 otherwise: a single "—" in a comment
 * doubles the memory the bundle takes (some 2 MB) for as long as the host runs. esbuild
 * escapes strings and identifiers itself and leaves comments and regular expression literals
 * as they were written, and in both an escape means what the character meant (a regular
 * expression reads `\u00b5` as `µ`, with or without the `u` flag).
 *
 * A tagged template's raw text is the one place where it would not: esbuild leaves those as
 * written too, and `String.raw` would see the escape. A line of code (not of a comment) with
 * such a character and a backquote is refused rather than guessed at.
 */
export function escapeNonAscii(source: string): string {
  const comment = /^\s*(\/\/|\/\*|\*)/;
  const doubtful = source.split('\n').findIndex((line) => /[\u0080-\uffff]/.test(line) && line.includes('`') && !comment.test(line));
  if (doubtful >= 0) {
    throw new Error(`line ${doubtful + 1} of the bundle has a character outside ASCII beside a template literal, where an escape could change its raw text; write the character as an escape in the source`);
  }
  return source.replace(/[\u0080-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * zod's messages in English only. `z` is one namespace object, so esbuild cannot leave out the
 * parts of it nobody uses, and 62 translations of zod's error messages (350 kB, half of zod)
 * would be parsed at every start and held in memory. The host's messages are zod's English ones,
 * its default; `z.locales` in the bundle holds `en` alone.
 */
export const englishOnlyZod: Plugin = {
  name: 'english-only-zod',
  setup(bundler) {
    // The module's name is the same on every machine, so the bundle is too.
    bundler.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: 'zod/v4/locales/english-only.js', namespace: 'english-only-zod', pluginData: path.join(path.dirname(args.importer), '..', 'locales') }
        : undefined);
    bundler.onLoad({ filter: /.*/, namespace: 'english-only-zod' }, (args) => ({
      contents: "export { default as en } from './en.js';\n",
      resolveDir: args.pluginData as string,
      loader: 'js',
    }));
  },
};

/** zod's installer of a prototype's methods (zod/v4/core/util.js and .cjs), as zod writes it. */
const ZOD_BOUND_METHOD = `function defineBound(proto, key, fn) {
    Object.defineProperty(proto, key, {
        configurable: true,
        get() {
            // vitest's spyOn calls a prototype getter bare to find the function it wraps, so a nullish receiver answers the raw method
            return this == null ? fn : own(this, key, fn.bind(this));
        },
        set(value) {
            own(this, key, value);
        },
    });
}`;

/** The same, installing the method itself. */
const ZOD_PROTOTYPE_METHOD = `function defineBound(proto, key, fn) {
    Object.defineProperty(proto, key, { configurable: true, writable: true, value: fn });
}`;

/**
 * zod's methods are plain prototype methods in the host bundle. zod installs each of a schema
 * class's forty-odd methods (`optional`, `parse`, `refine`...) on its prototype as an accessor
 * that binds the method to the schema the first time it is read, so that a method taken off a
 * schema (`const parse = schema.parse`) still works: a getter and a setter closure per method and
 * per class, some 1,200 pairs in the host, and a bound copy on each schema per method it used.
 * Measured idle with 1,000 files, that is about 0.3 MB of a 50 MB budget. The host always calls a
 * schema's methods on the schema. A zod whose installer reads otherwise is refused, not guessed at.
 */
export const zodMethodsOnPrototypes: Plugin = {
  name: 'zod-methods-on-prototypes',
  setup(bundler) {
    // Both of zod's builds: what `import` and what `require` of zod reach.
    bundler.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]core[\\/]util\.c?js$/ }, async (args) => {
      const source = await fs.readFile(args.path, 'utf8');
      if (!source.includes(ZOD_BOUND_METHOD)) {
        throw new Error(`${args.path} no longer installs zod's methods as scripts/build-host.ts expects (its defineBound has changed): read zod's new installer and update ZOD_BOUND_METHOD and ZOD_PROTOTYPE_METHOD there, or remove zodMethodsOnPrototypes from the build`);
      }
      return { contents: source.replace(ZOD_BOUND_METHOD, ZOD_PROTOTYPE_METHOD), loader: 'js' };
    });
  },
};

/**
 * clipanion's platform module is the host's (actors/shared/cli/clipanion-platform.ts): clipanion's
 * own loads `tty` as it loads, and keeps it loaded in a host whose output is never a terminal.
 */
export const clipanionPlatformWithoutTty: Plugin = {
  name: 'clipanion-platform-without-tty',
  setup(bundler) {
    bundler.onResolve({ filter: /^\.\.\/platform$/ }, (args) =>
      /[\\/]node_modules[\\/]clipanion[\\/]/.test(args.importer)
        ? { path: path.join(REPOSITORY, 'actors', 'shared', 'cli', 'clipanion-platform.ts') }
        : undefined);
  },
};

function packagesOf(inputs: string[]): string[] {
  // esbuild names an input by its real path from the repository: `node_modules/x/...`, or
  // `../../main/node_modules/x/...` where node_modules is a link to another checkout's.
  const names = inputs.map((input) => /^(?:\.\.\/)*(?:[^/]+\/)*?node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1]).filter((name): name is string => name !== undefined);
  return [...new Set(names)].sort();
}

function importersOf(metafile: Metafile, found: string[]): string[] {
  const wanted = new Set(found);
  return Object.entries(metafile.inputs)
    .filter(([file, input]) => !CONTROLLER_ONLY.some((pattern) => pattern.test(file)) && input.imports.some((imported) => wanted.has(imported.path)))
    .map(([file]) => file);
}

/** What the ELF header of a Node binary says about where it runs. */
export interface NodeBinaryFacts {
  /** `x86_64`, `aarch64`, or `elf-machine-<n>`. */
  arch: string;
  /** The C library its loader belongs to; `static` when it names no loader. */
  libc: 'glibc' | 'musl' | 'static' | 'unknown';
}

/** Reads a Node binary's architecture and C library from its ELF headers. */
export async function inspectNodeBinary(file: string): Promise<NodeBinaryFacts> {
  const handle = await fs.open(file, 'r');
  try {
    const header = Buffer.alloc(64);
    await handle.read(header, 0, 64, 0);
    if (header.subarray(0, 4).toString('latin1') !== '\x7fELF' || header[4] !== 2 || header[5] !== 1) {
      throw new Error(`${file} is not a 64-bit little-endian ELF executable, so it cannot be the base of a Linux single executable`);
    }
    const machine = header.readUInt16LE(18);
    const arch = machine === 62 ? 'x86_64' : machine === 183 ? 'aarch64' : `elf-machine-${machine}`;
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    await handle.read(table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i += 1) {
      const entry = table.subarray(i * phentsize, (i + 1) * phentsize);
      if (entry.readUInt32LE(0) !== 3) continue; // PT_INTERP
      const interpreter = Buffer.alloc(Number(entry.readBigUInt64LE(32)));
      await handle.read(interpreter, 0, interpreter.length, Number(entry.readBigUInt64LE(8)));
      const name = interpreter.toString('latin1').replace(/\0+$/, '');
      return { arch, libc: /ld-musl/.test(name) ? 'musl' : /ld-linux/.test(name) ? 'glibc' : 'unknown' };
    }
    return { arch, libc: 'static' };
  } finally {
    await handle.close();
  }
}

/** What one single executable came to. */
export interface ExecutableResult {
  file: string;
  bytes: number;
  ms: number;
}

/**
 * Makes a Node single executable of `bundle` at `outFile`: a SEA blob prepared by `node` itself
 * (`--experimental-sea-config`), injected into a copy of that same `node` with postject. The
 * blob's format and V8's code cache in it belong to the Node that prepared it, so the Node that
 * will run it prepares it: it must be able to run here. Its main is a small start
 * (actors/host/start/sea-start.ts) that runs the bundle, an asset, with a V8 code cache trained
 * by that same Node in an apply (trainCodeCache), another asset: Node's own code cache of a main
 * holds its top level only, and the bundle's functions were compiled at every start (about 20 ms
 * of user CPU in an apply of 1,000 files, bench/README.md). The result is never stripped: the
 * host is in a section a strip would drop.
 */
export async function buildSingleExecutable(options: { bundle: string; outFile: string; node: string; assets?: Record<string, string> }): Promise<ExecutableResult> {
  const started = performance.now();
  const node = options.node;
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'sea-'));
  try {
    const blob = path.join(work, 'host.blob');
    const config = path.join(work, 'sea-config.json');
    const main = path.join(work, 'sea-start.cjs');
    await build({ ...START_BUILD, entryPoints: [path.join(REPOSITORY, 'actors', 'host', 'start', 'sea-start.ts')], outfile: main });
    const cache = path.join(work, SEA_CODE_CACHE_ASSET);
    await trainCodeCache(node, path.resolve(options.bundle), cache);
    const assets = { ...options.assets, [SEA_BUNDLE_ASSET]: options.bundle, [SEA_CODE_CACHE_ASSET]: cache };
    await fs.writeFile(config, JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: true,
      // Read with node:sea's getAsset: the bundle and its cache by the main, libsodium by the
      // host (see libsodiumBesideBundle).
      assets: Object.fromEntries(Object.entries(assets).map(([name, file]) => [name, path.resolve(file)])),
    }));
    await run(node, ['--experimental-sea-config', config], `preparing the single executable blob with ${node}`);
    const executable = path.join(work, 'nox-mesh-host');
    await fs.copyFile(node, executable);
    await fs.chmod(executable, 0o755);
    // postject is a JavaScript program: any Node runs it.
    await run(process.execPath, [postjectCli(), executable, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], 'injecting the host into Node (postject)');
    await expectCacheUsed(executable, [], 'the executable was built, but its main does not take the code cache it carries');
    await fs.mkdir(path.dirname(options.outFile), { recursive: true });
    await fs.copyFile(executable, options.outFile);
    await fs.chmod(options.outFile, 0o755);
    return { file: options.outFile, bytes: (await fs.stat(options.outFile)).size, ms: performance.now() - started };
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

function postjectCli(): string {
  try {
    return require.resolve('postject/dist/cli.js');
  } catch {
    throw new Error('postject is not installed: it is a devDependency of this repository; run `npm ci` and build again');
  }
}

async function run(program: string, args: string[], doing: string): Promise<void> {
  try {
    await exec(program, args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failure = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${doing} failed: ${(failure.stderr || failure.stdout || failure.message).trim()}`, { cause: error });
  }
}

/**
 * Writes the release tarball: `nox-mesh-host` (the given executable), the launcher and the
 * rouse helper, flat, owned by root and executable, for `tar -xz -C /usr/local/bin`.
 */
export async function writeHostTarball(options: { executable: string; outFile: string }): Promise<{ file: string; bytes: number; ms: number }> {
  const started = performance.now();
  const staging = await fs.mkdtemp(path.join(os.tmpdir(), 'host-tarball-'));
  try {
    const members = { 'nox-mesh-host': options.executable, ...TARBALL_SCRIPTS };
    for (const [name, source] of Object.entries(members)) {
      await fs.copyFile(source, path.join(staging, name));
      await fs.chmod(path.join(staging, name), 0o755);
    }
    await fs.mkdir(path.dirname(options.outFile), { recursive: true });
    const mtime = process.env.SOURCE_DATE_EPOCH === undefined ? [] : [`--mtime=@${process.env.SOURCE_DATE_EPOCH}`];
    await run('tar', ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', ...mtime, '-C', staging, '-czf', path.resolve(options.outFile), ...Object.keys(members).sort()], 'writing the tarball');
    return { file: options.outFile, bytes: (await fs.stat(options.outFile)).size, ms: performance.now() - started };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** What `buildHost` made, and what it skipped and why. */
export interface HostBuild {
  bundle: BundleResult;
  tarballs: Array<{ system: HostSystem; file: string; bytes: number; executableBytes: number; ms: number; sameAs?: HostSystem }>;
  skipped: Array<{ system: HostSystem; reason: string }>;
  ms: number;
}

/** Options for {@link buildHost}. */
export interface HostBuildOptions {
  outDir: string;
  systems?: readonly HostSystem[];
  /**
   * The Node binary each system's executable is built on. Default: Node HOST_RUNTIME_VERSION for
   * linux-x64 (glibc) from the registry (scripts/fetch-node.ts), fetched when a system needs it.
   */
  nodeFor?: Partial<Record<HostSystem, string>>;
  /** The package release (Debian/Arch numbering). Default 1. */
  release?: number;
  bundleOnly?: boolean;
}

/**
 * The whole build: the bundle into `outDir`, then one tarball per system whose Node fits it (its
 * C library). A system whose Node does not fit is skipped with the reason when it was not asked
 * for by name, and fails the build when it was.
 */
export async function buildHost(options: HostBuildOptions): Promise<HostBuild> {
  const started = performance.now();
  const version = await projectVersion();
  await fs.mkdir(options.outDir, { recursive: true });
  const bundle = await bundleHost({ outFile: path.join(options.outDir, 'nox-mesh-host.cjs'), version, codeCache: true });
  const result: HostBuild = { bundle, tarballs: [], skipped: [], ms: 0 };
  if (options.bundleOnly) return { ...result, ms: performance.now() - started };

  const asked = options.systems !== undefined;
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'build-host-'));
  // Systems whose bundles and base Node are the same get the same executable, built once.
  const built = new Map<string, { executable: string; bytes: number; system: HostSystem }>();
  let shippedRuntime: Promise<string> | undefined;
  try {
    for (const system of options.systems ?? SYSTEMS) {
      const systemStarted = performance.now();
      const node = options.nodeFor?.[system] ?? (await (shippedRuntime ??= fetchNode()));
      const facts = await inspectNodeBinary(node);
      if (facts.libc !== LIBC[system] && facts.libc !== 'static') {
        const reason = `${node} is linked against ${facts.libc}, and ${system} needs a Node linked against ${LIBC[system]}, which the npm registry does not carry: give one with --node ${system}=PATH (Node ${HOST_RUNTIME_VERSION}, the release the other systems carry)`;
        if (asked) throw new Error(`cannot build the ${system} executable: ${reason}`);
        result.skipped.push({ system, reason });
        continue;
      }
      const systemBundle = await bundleHost({ outFile: path.join(work, `${system}.cjs`), version, packageVersion: packageVersionFor(system, version, options.release) });
      const key = createHash('sha256').update(await fs.readFile(systemBundle.file)).update(await fs.realpath(node)).digest('hex');
      let executable = built.get(key);
      const sameAs = executable?.system;
      if (executable === undefined) {
        const made = await buildSingleExecutable({ bundle: systemBundle.file, outFile: path.join(work, system, 'nox-mesh-host'), node, assets: { [LIBSODIUM_FILE]: systemBundle.libsodium.file } });
        executable = { executable: made.file, bytes: made.bytes, system };
        built.set(key, executable);
      }
      const tarball = await writeHostTarball({ executable: executable.executable, outFile: path.join(options.outDir, tarballName(system, version, facts.arch)) });
      result.tarballs.push({
        system,
        file: tarball.file,
        bytes: tarball.bytes,
        executableBytes: executable.bytes,
        ms: performance.now() - systemStarted,
        ...(sameAs === undefined ? {} : { sameAs }),
      });
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return { ...result, ms: performance.now() - started };
}

const HOST_USAGE = 'build-host [--out DIR] [--system NAME]... [--node SYSTEM=PATH]... [--release N] [--bundle-only]';

/** Reads the command line (see the file's comment). */
export function parseArguments(argv: readonly string[]): HostBuildOptions {
  const given = scriptArguments(argv, {
    out: { type: 'string' },
    'bundle-only': { type: 'boolean' },
    release: { type: 'string' },
    system: { type: 'string', multiple: true },
    node: { type: 'string', multiple: true },
  }, HOST_USAGE);
  const isSystem = (value: string): value is HostSystem => (SYSTEMS as readonly string[]).includes(value);
  const options: HostBuildOptions = { outDir: path.resolve(given.out ?? path.join(REPOSITORY, 'dist')) };
  if (given['bundle-only']) options.bundleOnly = true;
  if (given.release !== undefined) options.release = wholeNumberOption('--release', given.release);
  const systems = (given.system ?? []).map((system) => {
    if (!isSystem(system)) throw new Error(`--system is one of ${SYSTEMS.join(', ')}, not ${JSON.stringify(system)}`);
    return system;
  });
  if (systems.length > 0) options.systems = systems;
  const nodeFor: Partial<Record<HostSystem, string>> = {};
  for (const pair of given.node ?? []) {
    const [system, file] = pair.split(/=(.*)/s) as [string, string | undefined];
    if (!isSystem(system) || !file) throw new Error(`--node takes SYSTEM=PATH with SYSTEM one of ${SYSTEMS.join(', ')}, not ${JSON.stringify(pair)}`);
    nodeFor[system] = path.resolve(file);
  }
  if (Object.keys(nodeFor).length > 0) options.nodeFor = nodeFor;
  return options;
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(0)} kB`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  const outcome = await buildHost(parseArguments(process.argv.slice(2)));
  const out = process.stdout;
  const shown = (file: string) => path.relative(process.cwd(), file) || file;
  out.write(`${shown(outcome.bundle.file)}  ${size(outcome.bundle.bytes)}  ${seconds(outcome.bundle.ms)}  (${outcome.bundle.packages.join(', ')})\n`);
  out.write(`${shown(outcome.bundle.libsodium.file)}  ${size(outcome.bundle.libsodium.bytes)}  (libsodium, loaded on the first sealed box; inside each executable as an asset)\n`);
  const cache = outcome.bundle.codeCache;
  if (cache !== undefined) out.write(`${shown(cache.file)}  ${size(cache.bytes)}  (V8 code cache of the bundle for ${process.version}, used by ${shown(cache.launcher)})\n`);
  for (const tarball of outcome.tarballs) {
    const same = tarball.sameAs === undefined ? '' : `, the same executable as ${tarball.sameAs}`;
    out.write(`${shown(tarball.file)}  ${size(tarball.bytes)} (executable ${size(tarball.executableBytes)}${same})  ${seconds(tarball.ms)}\n`);
  }
  for (const skipped of outcome.skipped) out.write(`skipped ${skipped.system}: ${skipped.reason}\n`);
  out.write(`built in ${seconds(outcome.ms)}\n`);
}

// Run as a script (node scripts/run-ts.cjs scripts/build-host.ts), not when a test imports it.
if (path.resolve(process.argv[1] ?? '') === __filename) {
  main().catch((error: unknown) => {
    process.stderr.write(`build-host: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
