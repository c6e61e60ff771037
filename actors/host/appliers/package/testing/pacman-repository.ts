import { join } from 'node:path';
import { runTool } from './run-tool';

/**
 * Adds a package file (already in `directory`) to the pacman repository database
 * `<repository>.db` there, with pacman's own `repo-add`; a newer version replaces the entry,
 * as in a real repository, which lists one version of each package.
 */
export async function addToPacmanRepository(directory: string, repository: string, packagePath: string): Promise<void> {
  await runTool(['repo-add', '--quiet', join(directory, `${repository}.db.tar.gz`), packagePath]);
}
