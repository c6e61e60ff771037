/**
 * A V8 code cache for the host bundle under a machine's own Node (20 has no
 * `module.enableCompileCache`): the bundle's functions as V8 compiled them in an apply at build
 * time, so a start deserializes them instead of parsing 1.2 MB and compiling every function it
 * calls again. Measured on this machine, an `apply` of nothing spends about 35 ms less user CPU
 * (see bench/README.md, "Against cf-agent").
 *
 * Safety, since cached data is code V8 runs without checking it (release builds of V8 do not
 * verify its checksum, and V8 matches it to a source by the source's length alone):
 *
 * - The cache is made only by the build (scripts/build-host.ts), beside the bundle it was made
 *   from, by the Node that builds it. Nothing at run time writes it: the host never puts a cache
 *   anywhere, let alone somewhere it does not own.
 * - It is used only when its header names the SHA-256 of the very bundle being started, the
 *   same Node release, V8 and architecture, and the SHA-256 of its own data; a cache that is
 *   stale, truncated or from another Node is ignored and the bundle compiled from its source.
 * - It is used only when it is a regular file (opened without following a link) owned by the
 *   bundle's owner or root and writable by nobody else: whoever could replace it could replace
 *   the bundle beside it.
 * - V8 checks its own version, flags and the source's length again and compiles from source when
 *   they differ (`cachedDataRejected`). So a cache can change how fast the host starts, never
 *   what it does.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** The cache's name beside the bundle. */
export const CODE_CACHE_FILE = 'nox-mesh-host-code-cache.bin';

/** The first line of every cache file: the format, so another one is never misread. */
const MAGIC = 'nox-mesh-host v8 code cache 1\n';

/** What the header of a cache says it was made from. */
export interface CodeCacheHeader {
  node: string;
  v8: string;
  arch: string;
  /** SHA-256 of the bundle's bytes. */
  source_sha256: string;
  /** SHA-256 of the cached data after the header. */
  data_sha256: string;
  data_bytes: number;
}

/** Where a cache was taken or why it was not. */
export type CodeCacheVerdict = { used: true; data: Buffer } | { used: false; why: string };

/** This Node, as a cache header names it. */
function thisRuntime(): Pick<CodeCacheHeader, 'node' | 'v8' | 'arch'> {
  return { node: process.version, v8: process.versions.v8, arch: process.arch };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A cache file's bytes: the magic line, the header as one JSON line, then V8's data. */
export function encodeCodeCache(bundleBytes: Buffer, data: Buffer): Buffer {
  const header: CodeCacheHeader = { ...thisRuntime(), source_sha256: sha256(bundleBytes), data_sha256: sha256(data), data_bytes: data.length };
  return Buffer.concat([Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`, 'latin1'), data]);
}

/** The cached data in `cache` when it was made from `bundleBytes` by this Node, or why not. */
export function decodeCodeCache(cache: Buffer, bundleBytes: Buffer): CodeCacheVerdict {
  if (cache.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) return { used: false, why: 'not a code cache of this format' };
  const end = cache.indexOf(0x0a, MAGIC.length);
  if (end < 0) return { used: false, why: 'its header is cut short' };
  let header: Partial<CodeCacheHeader>;
  try {
    header = JSON.parse(cache.subarray(MAGIC.length, end).toString('latin1')) as Partial<CodeCacheHeader>;
  } catch {
    return { used: false, why: 'its header is not JSON' };
  }
  const runtime = thisRuntime();
  for (const key of ['node', 'v8', 'arch'] as const) {
    if (header[key] !== runtime[key]) return { used: false, why: `made by ${key} ${String(header[key])}, this is ${runtime[key]}` };
  }
  const data = cache.subarray(end + 1);
  if (header.data_bytes !== data.length || header.data_sha256 !== sha256(data)) return { used: false, why: 'its data is not what its header says (cut short or changed)' };
  if (header.source_sha256 !== sha256(bundleBytes)) return { used: false, why: 'made from another bundle' };
  return { used: true, data };
}

/**
 * Reads the cache at `cacheFile` for the bundle owned by `bundleOwner`: its data, or why it is not
 * used (see the file's comment). Never throws: a cache that cannot be read is one not used.
 */
export function readCodeCache(cacheFile: string, bundleOwner: number, bundleBytes: Buffer): CodeCacheVerdict {
  let fd: number;
  try {
    fd = fs.openSync(cacheFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    return { used: false, why: `cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { used: false, why: 'not a regular file' };
    if (stat.uid !== bundleOwner && stat.uid !== 0) return { used: false, why: `owned by uid ${stat.uid}, not by the bundle's owner (${bundleOwner}) or root` };
    if ((stat.mode & 0o022) !== 0) return { used: false, why: `writable by others (mode ${(stat.mode & 0o777).toString(8)})` };
    return decodeCodeCache(fs.readFileSync(fd), bundleBytes);
  } catch (error) {
    return { used: false, why: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  } finally {
    fs.closeSync(fd);
  }
}

/** The bundle compiled, ready to run, and what became of its cache. */
export interface CompiledBundle {
  script: vm.Script;
  /** Runs the bundle as Node runs a CommonJS main module: its own `require`, `module` and paths. */
  run(): void;
  cache: CodeCacheVerdict | { used: false; why: string };
  /** V8 refused data the header accepted (its own checks: flags, version, source length). */
  rejected: boolean;
}

/**
 * Compiles the bundle at `bundleFile` as Node compiles a CommonJS file (the same wrapper's
 * parameters, its name in stack traces, line numbers unchanged), with `cachedData` when given.
 */
export function compileBundle(bundleFile: string, bundleBytes: Buffer, cachedData?: Buffer): { script: vm.Script; run(): void } {
  let source = bundleBytes.toString('utf8');
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundleFile,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  return {
    script,
    run() {
      const owner = new Module(bundleFile);
      owner.filename = bundleFile;
      owner.loaded = true;
      const wrapped = script.runInThisContext() as (...args: unknown[]) => void;
      wrapped.call(owner.exports, owner.exports, createRequire(bundleFile), owner, bundleFile, path.dirname(bundleFile));
    },
  };
}

/**
 * Starts the bundle at `bundleFile` with the code cache beside it when that cache is sound (see
 * the file's comment), and from its source otherwise. A bundle that cannot be read throws, as
 * `node bundle` would fail.
 */
export function startBundle(bundleFile: string): CompiledBundle {
  const fd = fs.openSync(bundleFile, 'r');
  let bytes: Buffer;
  let owner: number;
  try {
    owner = fs.fstatSync(fd).uid;
    bytes = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const cache = readCodeCache(path.join(path.dirname(bundleFile), CODE_CACHE_FILE), owner, bytes);
  const compiled = compileBundle(bundleFile, bytes, cache.used ? cache.data : undefined);
  const rejected = cache.used && compiled.script.cachedDataRejected === true;
  return { ...compiled, cache, rejected };
}

/**
 * What a start says of its cache under `NOX_MESH_HOST_SAY_CODE_CACHE=1` (for the bench and the
 * tests): `used`, or why not.
 */
export function sayCodeCache(cache: CodeCacheVerdict, script: vm.Script): void {
  if (process.env.NOX_MESH_HOST_SAY_CODE_CACHE !== '1') return;
  const rejected = cache.used && script.cachedDataRejected === true;
  const said = cache.used ? (rejected ? 'not used: V8 refused it (its flags or version differ)' : 'used') : `not used: ${cache.why}`;
  process.stderr.write(`code cache: ${said}\n`);
}
