import { constants } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { StoreLocked } from './store-errors';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';

/** The lock file's name inside the state directory; it holds the holder's pid. */
export const LOCK_FILE = 'host.lock';

/**
 * Takes the store for this process: one writer at a time, so `nox-mesh-host apply` by hand and
 * the running host never interleave their writes. A lock left by a process that no longer
 * exists is taken over. Returns the release function.
 */
export async function lockStore(stateDir: string, pid = process.pid): Promise<() => Promise<void>> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await fs.open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      await handle.writeFile(`${pid}\n`);
      await handle.close();
      return async () => {
        const holder = await readPidFile(file);
        if (holder === pid) await fs.rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readPidFile(file);
    if (holder !== undefined && holder !== pid && isProcessAlive(holder)) {
      throw new StoreLocked(`the host store in ${stateDir} is in use by process ${holder}`, {
        value: file,
        next: `wait for that process to finish (is the host running? \`nox-mesh-host run\` holds the store), or stop it first`,
        retryable: true,
      });
    }
    await fs.rm(file, { force: true }); // stale: its holder is gone
  }
  throw new StoreLocked(`could not take the lock on the host store in ${stateDir}`, { value: file, next: 'try again', retryable: true });
}
