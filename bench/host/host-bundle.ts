import { existsSync } from 'node:fs';
import path from 'node:path';
import { runCli, succeeded } from '../../e2e/run-cli';

/** Where `npm run build:host` puts the one-file host. */
export function bundlePath(repoDir: string): string {
  return path.join(repoDir, 'dist', 'nox-mesh-host.cjs');
}

// One build per benchmark process, shared by every section that runs the bundle.
let built: Promise<string> | undefined;

/**
 * The bundled host, built from the sources as they are (`build-host --bundle-only`, about a
 * second) the first time a section asks for it in this process: a bundle left in dist/ by an
 * earlier build would measure older code.
 */
export function ensureBundle(repoDir: string, say: (line: string) => void): Promise<string> {
  built ??= build(repoDir, say);
  return built;
}

async function build(repoDir: string, say: (line: string) => void): Promise<string> {
  const bundle = bundlePath(repoDir);
  say('building the host bundle from the sources (dist/nox-mesh-host.cjs)');
  succeeded(await runCli([process.execPath, path.join(repoDir, 'scripts', 'run-ts.cjs'), 'scripts/build-host.ts', '--bundle-only'], { cwd: repoDir, timeoutMs: 300_000, label: 'build-host --bundle-only' }));
  if (!existsSync(bundle)) throw new Error(`build-host --bundle-only finished without writing ${bundle}`);
  return bundle;
}
