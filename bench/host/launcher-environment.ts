import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OperatorError } from '../../actors/shared/operator-error';

/** The launcher script, from the checkout's root. */
export const LAUNCHER_SCRIPT = path.join('launcher', 'nox-mesh-host-launch');

/** The launcher's line that starts the host is the one that runs `"$host_bin" run`. */
const STARTS_THE_HOST = /"\$host_bin"\s+run\b/;

/** `MALLOC_X=${MALLOC_X:-value}`: a default the launcher hands the host unless the service set one. */
const ALLOCATOR_DEFAULT = /\b(MALLOC_[A-Z_]+)=\$\{\1:-([^}]*)\}/g;

/**
 * The launcher's script no longer shows the allocator settings this reader looks for, so the
 * bench cannot start the host the way a machine does.
 */
export class LauncherAllocatorSettingsNotFound extends OperatorError {
  constructor(file: string, detail: string) {
    super(`no glibc allocator settings found on the line of the launcher that starts the host (${detail})`, {
      value: file,
      next: 'keep the launcher starting the host as `MALLOC_NAME=${MALLOC_NAME:-value} ... "$host_bin" run ...`, or change bench/host/launcher-environment.ts to read what it does now',
    });
  }
}

/**
 * The allocator settings the launcher hands the host (`MALLOC_TRIM_THRESHOLD_` and the like,
 * with the defaults it uses when the service sets none), read from the launcher script itself so
 * the bench measures the host as a machine runs it and cannot drift from the launcher.
 * Throws `LauncherAllocatorSettingsNotFound` when the script shows none.
 */
export function launcherAllocatorEnvironment(repoDir: string): Record<string, string> {
  const file = path.join(repoDir, LAUNCHER_SCRIPT);
  // A line continued with a backslash is one line to the shell.
  const lines = readFileSync(file, 'utf8').replace(/\\\n/g, ' ').split('\n');
  const start = lines.find((line) => STARTS_THE_HOST.test(line) && !line.trimStart().startsWith('#'));
  if (start === undefined) throw new LauncherAllocatorSettingsNotFound(file, 'no line runs "$host_bin" run');
  const environment: Record<string, string> = {};
  for (const [, name, value] of start.matchAll(ALLOCATOR_DEFAULT)) environment[name] = value;
  if (Object.keys(environment).length === 0) throw new LauncherAllocatorSettingsNotFound(file, `the line is ${start.trim()}`);
  return environment;
}

/** `MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=32768`, for a figure's note. */
export function describeEnvironment(environment: Readonly<Record<string, string>>): string {
  return Object.entries(environment).map(([name, value]) => `${name}=${value}`).join(' ');
}
