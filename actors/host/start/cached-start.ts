/**
 * The host bundle started with its code cache (code-cache.ts): what `dist/nox-mesh-host-cached.cjs`
 * runs. It takes the same command line as the bundle and does the same; only the start is
 * cheaper when the build's cache beside it fits. `NOX_MESH_HOST_SAY_CODE_CACHE=1` writes one line
 * to stderr saying whether the cache was used, and why not (for the bench and the tests).
 */
import path from 'node:path';
import { sayCodeCache, startBundle } from './code-cache';

/** Starts the bundle named `bundleName` in this file's folder. */
export function startCached(folder: string, bundleName: string): void {
  const started = startBundle(path.join(folder, bundleName));
  sayCodeCache(started.cache, started.script);
  started.run();
}
