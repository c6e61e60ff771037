import { constants } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { StoreLocked } from './store-errors';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';

/** The lock file's name inside the state directory; it holds the holder's pid. */
export const LOCK_FILE = 'host.lock';

const ATTEMPTS = 5;
// A claim (`host.lock.<pid>.<random>`) or a stale lock moved aside (`host.lock.stale.<pid>.<random>`).
const LEFTOVER = /^host\.lock\.(?:stale\.)?(\d+)\.[0-9a-z]+$/;

/**
 * Takes the store for this process: one writer at a time, so `nox-mesh-host apply` by hand and
 * the running host never interleave their writes. Returns the release function.
 *
 * The lock is put in place whole or not at all: the pid is written to a claim file of this
 * process's own, which is then hard-linked to `host.lock` (a link, like O_EXCL, fails when the
 * name is taken). A lock whose holder no longer exists is taken over without ever removing the
 * name of a live lock: it is renamed aside (one rename of a name succeeds, so of two processes
 * taking over at once only one moves it), and what was moved is checked to be the very file
 * judged stale; a live lock another process put there meanwhile is linked back. Then the link
 * is tried again, and the process that loses that race finds a live holder and is refused.
 */
export async function lockStore(stateDir: string, pid = process.pid): Promise<() => Promise<void>> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCK_FILE);
  await sweepLeftovers(stateDir);
  const claim = path.join(stateDir, `${LOCK_FILE}.${pid}.${nonce()}`);
  const handle = await fs.open(claim, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(`${pid}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      try {
        await fs.link(claim, file);
        return async () => {
          const holder = await readPidFile(file);
          if (holder === pid) await fs.rm(file, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      await takeOverIfStale(stateDir, file, pid);
    }
  } finally {
    await fs.rm(claim, { force: true });
  }
  throw new StoreLocked(`could not take the lock on the host store in ${stateDir}`, { value: file, next: 'try again', retryable: true });
}

/**
 * Throws StoreLocked when a live process holds `file`; otherwise moves the stale lock aside
 * (see lockStore) so the next link can succeed.
 */
async function takeOverIfStale(stateDir: string, file: string, pid: number): Promise<void> {
  let seen;
  try {
    seen = await fs.lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // released meanwhile
    throw error;
  }
  const holder = await readPidFile(file);
  if (holder !== undefined && holder !== pid && isProcessAlive(holder)) {
    throw new StoreLocked(`the host store in ${stateDir} is in use by process ${holder}`, {
      value: file,
      next: `wait for that process to finish (is the host running? \`nox-mesh-host run\` holds the store), or stop it first`,
      retryable: true,
    });
  }
  const aside = path.join(stateDir, `${LOCK_FILE}.stale.${pid}.${nonce()}`);
  try {
    await fs.rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // another process moved it first
    throw error;
  }
  try {
    const moved = await fs.lstat(aside);
    if (moved.ino !== seen.ino || moved.dev !== seen.dev) {
      // Not the stale lock: one another process took over with in between. Put it back.
      await fs.link(aside, file).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      });
    }
  } finally {
    await fs.rm(aside, { force: true });
  }
}

/** Removes claims and moved-aside locks of processes that no longer exist (killed while locking). */
async function sweepLeftovers(stateDir: string): Promise<void> {
  for (const name of await fs.readdir(stateDir)) {
    const match = LEFTOVER.exec(name);
    if (match === null || isProcessAlive(Number(match[1]))) continue;
    await fs.rm(path.join(stateDir, name), { force: true });
  }
}

function nonce(): string {
  return Math.random().toString(36).slice(2);
}
