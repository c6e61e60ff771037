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
