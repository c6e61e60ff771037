import { CODE_CACHE_FILE } from './code-cache';

/** The bundle's name among the single executable's assets (sea-start.ts). */
export const SEA_BUNDLE_ASSET = 'nox-mesh-host.cjs';

/** The bundle's trained code cache's name among the single executable's assets (sea-start.ts). */
export const SEA_CODE_CACHE_ASSET = CODE_CACHE_FILE;

/** Whether the verb on this command line (the first word that is not an option) is `run`. */
export function startsRun(args: readonly string[]): boolean {
  return args.find((arg) => !arg.startsWith('-')) === 'run';
}
