import { existsSync } from 'node:fs';
import path from 'node:path';
import { runCli, succeeded } from '../../e2e/run-cli';

/** Where `npm run build:host` puts the one-file host. */
export function bundlePath(repoDir: string): string {
  return path.join(repoDir, 'dist', 'nox-mesh-host.cjs');
}

/**
 * The bundled host, built first (`build-host --bundle-only`, seconds) when dist/ has none. An
 * existing bundle is used as it is: rebuild it with `npm run build:host` to measure changed
 * sources.
 */
export async function ensureBundle(repoDir: string, say: (line: string) => void): Promise<string> {
  const bundle = bundlePath(repoDir);
  if (existsSync(bundle)) return bundle;
  say('building the host bundle (dist/nox-mesh-host.cjs)');
  succeeded(await runCli([process.execPath, path.join(repoDir, 'scripts', 'run-ts.cjs'), 'scripts/build-host.ts', '--bundle-only'], { cwd: repoDir, timeoutMs: 300_000, label: 'build-host --bundle-only' }));
  if (!existsSync(bundle)) throw new Error(`build-host --bundle-only finished without writing ${bundle}`);
  return bundle;
}
