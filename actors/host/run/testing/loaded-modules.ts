import { spawn } from 'node:child_process';
import path from 'node:path';

/** The preload that makes a host process list what it loaded (loaded-modules.cjs). */
export const LOADED_MODULES_PRELOAD = path.join(__dirname, 'loaded-modules.cjs');

/**
 * The files a process started with {@link LOADED_MODULES_PRELOAD} loaded, read from its
 * standard error; throws, quoting it, when the list is missing (the process did not exit).
 */
export function loadedModules(stderr: string): string[] {
  const line = /^loaded modules: (.*)$/m.exec(stderr);
  if (line === null) throw new Error(`the process did not list what it loaded; its standard error:\n${stderr}`);
  return JSON.parse(line[1] as string) as string[];
}

/** The npm packages among `files`, by name (`zod`, `@nats-io/nats-core`, …). */
export function packagesAmong(files: readonly string[]): string[] {
  const names = files.map((file) => /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(file)?.[1]?.replace('\\', '/'));
  return [...new Set(names.filter((name): name is string => name !== undefined))].sort();
}

/**
 * Starts `nox-mesh-host run --root root` from the checkout with the preload, waits until its
 * standard output has a line matching `line` (30 s at most), stops it with SIGTERM, expects a
 * clean exit, and returns what it printed and every file it loaded.
 */
export async function loadedByRunUntil(root: string, line: RegExp): Promise<{ said: string; files: string[] }> {
  const repo = path.resolve(__dirname, '..', '..', '..', '..');
  const host = spawn(process.execPath, ['-r', LOADED_MODULES_PRELOAD, path.join(repo, 'bin', 'nox-mesh-host'), 'run', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  host.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => host.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      host.kill('SIGKILL');
      reject(new Error(`the host printed no line matching ${String(line)}; it said:\n${stdout}${stderr}`));
    }, 30_000);
    host.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (line.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  host.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`the host exited with ${code} when stopped; it said:\n${stdout}${stderr}`);
  return { said: stdout, files: loadedModules(stderr) };
}
