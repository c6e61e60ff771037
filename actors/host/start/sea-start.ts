/**
 * The single executable's main (scripts/build-host.ts, buildSingleExecutable): the host bundle is
 * an asset of the executable, started with the V8 code cache the build trained for it in an
 * apply (code-cache.ts), another asset. Node's own code cache of a SEA main holds only the
 * script's top level, so without this every function an apply runs was compiled at every start.
 *
 * `run` starts without it: the cache makes V8 hold the code of every function the training
 * apply ran from the first instant, and the long-lived host's memory counts for more than its
 * start. A cache that does not fit (another bundle, another Node) is ignored as the cached start
 * ignores one; the assets are as trustworthy as the executable that carries them.
 * `NOX_MESH_HOST_SAY_CODE_CACHE=1` writes one line to stderr saying whether it was used.
 */
import sea from 'node:sea';
import { compileBundle, decodeCodeCache, sayCodeCache, type CodeCacheVerdict } from './code-cache';
import { SEA_BUNDLE_ASSET, SEA_CODE_CACHE_ASSET, startsRun } from './sea-assets';

function cacheFor(bundle: Buffer): CodeCacheVerdict {
  if (startsRun(process.argv.slice(2))) return { used: false, why: '`run` starts without it' };
  let cache: Buffer;
  try {
    cache = Buffer.from(sea.getAsset(SEA_CODE_CACHE_ASSET));
  } catch {
    return { used: false, why: 'this executable carries none' };
  }
  return decodeCodeCache(cache, bundle);
}

const bundle = Buffer.from(sea.getAsset(SEA_BUNDLE_ASSET));
const cache = cacheFor(bundle);
const compiled = compileBundle(process.execPath, bundle, cache.used ? cache.data : undefined);
sayCodeCache(cache, compiled.script);
compiled.run();
