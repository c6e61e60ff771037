import type { RunResult } from '../../../shared/process/command-runner';

/**
 * Everything a package manager printed, its error stream first: where a backend looks for the
 * words that say why it failed (a held lock, a name no repository has), since the managers do
 * not agree on which stream those go to.
 */
export function outputOf(result: RunResult): string {
  return `${result.stderr}\n${result.stdout}`;
}
