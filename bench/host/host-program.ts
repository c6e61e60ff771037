import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { buildSingleExecutable, CACHED_START_FILE } from '../../scripts/build-host';
import { fetchNode, HOST_RUNTIME_VERSION, RUNTIME_CACHE } from '../../scripts/fetch-node';
import { LIBSODIUM_FILE } from '../../actors/shared/crypto/libsodium-beside-bundle';
import { ensureBundle } from './host-bundle';

/** The host as a comparison runs it: the command line before the verb, and what it is, for a note. */
export interface HostProgram {
  argv: [string, ...string[]];
  /** What was measured, in words for a row's note. */
  what: string;
  kind: 'executable' | 'bundle';
}

/** Where the bench puts the single executable it builds from this checkout's bundle. */
export function benchExecutablePath(repoDir: string): string {
  return path.join(repoDir, 'dist', 'bench', 'nox-mesh-host');
}

/**
 * The host the packages install, built from the sources as they are: the single executable
 * (`npm run build:host`: Node HOST_RUNTIME_VERSION with the bundle and V8's code cache in it),
 * made from the fresh bundle when that Node has already been fetched into .cache/node/ (the
 * bench fetches nothing; `npm run build:host` does). Otherwise the bundle under this Node,
 * started with the code cache the build made beside it (dist/nox-mesh-host-cached.cjs), and
 * `what` says so and why.
 */
export function ensureHostProgram(repoDir: string, say: (line: string) => void): Promise<HostProgram> {
  // One build per benchmark process, as for the bundle.
  built ??= build(repoDir, say);
  return built;
}

let built: Promise<HostProgram> | undefined;

async function build(repoDir: string, say: (line: string) => void): Promise<HostProgram> {
  const bundle = await ensureBundle(repoDir, say);
  const runtime = path.join(RUNTIME_CACHE, `v${HOST_RUNTIME_VERSION}-linux-x64`);
  const cached = path.join(path.dirname(bundle), CACHED_START_FILE);
  const fallback = existsSync(cached)
    ? { argv: [process.execPath, cached] as [string, ...string[]], what: `the bundle under Node ${process.version} with its code cache (dist/${CACHED_START_FILE})` }
    : { argv: [process.execPath, bundle] as [string, ...string[]], what: `the bundle under Node ${process.version}` };
  if (!existsSync(path.join(runtime, 'node')) || !existsSync(path.join(runtime, 'node.sha512'))) {
    return { ...fallback, kind: 'bundle', what: `${fallback.what}; not the single executable: Node ${HOST_RUNTIME_VERSION} is not in .cache/node/ (npm run build:host fetches it)` };
  }
  try {
    const node = await fetchNode();
    const outFile = benchExecutablePath(repoDir);
    say(`building the single executable from the bundle on Node ${HOST_RUNTIME_VERSION} (${path.relative(repoDir, outFile)})`);
    await fs.mkdir(path.dirname(outFile), { recursive: true });
    await buildSingleExecutable({ bundle, outFile, node, assets: { [LIBSODIUM_FILE]: path.join(path.dirname(bundle), LIBSODIUM_FILE) } });
    return { argv: [outFile], kind: 'executable', what: `the single executable the packages install (Node ${HOST_RUNTIME_VERSION}, built from this checkout)` };
  } catch (error) {
    return { ...fallback, kind: 'bundle', what: `${fallback.what}; not the single executable: ${(error as Error).message.slice(0, 200)}` };
  }
}
