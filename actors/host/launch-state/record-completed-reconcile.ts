import * as fs from '../../shared/fs/promised-fs';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { launchFilesOf } from './launch-files';
import { LaunchStateUnwritable } from './launch-state-errors';
import { runningPackageVersion } from './running-package-version';

/**
 * Tells the launcher that this host has proved itself: writes `known-good` with the version
 * this process runs, then removes `attempts` and `rolled-back`, in that order
 * (launcher/README.md). Called when a reconcile pass completes.
 *
 * The order matters to a host killed half way: with `known-good` written and the counter not
 * yet cleared, the launcher at worst rolls back to the version that just worked. `known-good` is
 * rewritten only when it changes, so a pass every ten minutes costs no disk write.
 *
 * `version` is the running version in the package manager's form; after installing its own
 * upgrade the host still runs the old binary, and the new one has proved nothing yet.
 */
export async function recordCompletedReconcile(stateDir: string, version = runningPackageVersion()): Promise<void> {
  const files = launchFilesOf(stateDir);
  let step = files.knownGood;
  try {
    if ((await readFirstLine(files.knownGood)) !== version) {
      await fs.mkdir(files.dir, { recursive: true, mode: 0o755 });
      await writeFileAtomic(files.knownGood, `${version}\n`, 0o644);
    }
    step = files.attempts;
    await fs.rm(files.attempts, { force: true });
    step = files.rolledBack;
    await fs.rm(files.rolledBack, { force: true });
  } catch (error) {
    throw new LaunchStateUnwritable(step, error);
  }
}

async function readFirstLine(file: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(file, 'utf8')).split('\n')[0];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
