import { constants } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { StoreLocked } from './store-errors';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';

/** The lock file's name inside the state directory; it holds the holder's pid. */
export const LOCK_FILE = 'host.lock';

const ATTEMPTS = 20;
const TAKEOVER_FILE = `${LOCK_FILE}.takeover`;
// A claim (`host.lock.<pid>.<random>`) or a stale lock moved aside (`host.lock.stale.<pid>.<random>`).
const LEFTOVER = /^host\.lock\.(?:stale\.)?(\d+)\.[0-9a-z]+$/;

/**
 * Takes the store for this process: one writer at a time, so `nox-mesh-host apply` by hand and
 * the running host never interleave their writes. Returns the release function.
 *
 * The lock is put in place whole or not at all: the pid is written to a claim file of this
 * process's own, which is then hard-linked to `host.lock` (a link, like O_EXCL, fails when the
 * name is taken). A lock whose holder no longer exists is taken over by renaming a link of the
 * claim over it, which replaces it in one step, so `host.lock` is never absent on the way and
 * no other process can link a lock of its own in meanwhile. Only one process takes over at a
 * time: it first links its claim to `host.lock.takeover`, then looks again, under that guard,
 * that `host.lock` is still the very file it judged stale before replacing it.
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
        return releaseOf(file, pid);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (await takeOverIfStale(stateDir, file, claim, pid)) return releaseOf(file, pid);
      await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
    }
  } finally {
    await fs.rm(claim, { force: true });
  }
  throw new StoreLocked(`could not take the lock on the host store in ${stateDir}`, { value: file, next: 'try again', retryable: true });
}

function releaseOf(file: string, pid: number): () => Promise<void> {
  return async () => {
    const holder = await readPidFile(file);
    if (holder === pid) await fs.rm(file, { force: true });
  };
}

/**
 * Throws StoreLocked when a live process holds `file`. Otherwise, when no other process is
 * taking it over, replaces the stale lock with this process's claim and returns true.
 */
async function takeOverIfStale(stateDir: string, file: string, claim: string, pid: number): Promise<boolean> {
  const seen = await staleLock(stateDir, file, pid);
  if (seen === undefined) return false;
  const guard = path.join(stateDir, TAKEOVER_FILE);
  try {
    await fs.link(claim, guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    await clearStaleGuard(stateDir, guard);
    return false; // another process is taking over: look again
  }
  try {
    const now = await fs.lstat(file).catch(() => undefined);
    if (now === undefined || now.ino !== seen.ino || now.dev !== seen.dev) return false;
    const replacement = path.join(stateDir, `${LOCK_FILE}.${pid}.${nonce()}`);
    await fs.link(claim, replacement);
    await fs.rename(replacement, file);
    return true;
  } finally {
    await fs.rm(guard, { force: true });
  }
}

/** The stale lock's identity, or undefined when there is none now; throws StoreLocked when its holder lives. */
async function staleLock(stateDir: string, file: string, pid: number): Promise<{ ino: number; dev: number } | undefined> {
  let seen;
  try {
    seen = await fs.lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // released meanwhile
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
  return { ino: seen.ino, dev: seen.dev };
}

/**
 * A takeover guard left by a process killed while taking over (it holds the guard for a few
 * file operations) is moved aside and removed, after checking that what was moved is the file
 * judged stale.
 */
async function clearStaleGuard(stateDir: string, guard: string): Promise<void> {
  const seen = await fs.lstat(guard).catch(() => undefined);
  const holder = await readPidFile(guard);
  if (seen === undefined || (holder !== undefined && isProcessAlive(holder))) return;
  const aside = path.join(stateDir, `${LOCK_FILE}.stale.${process.pid}.${nonce()}`);
  try {
    await fs.rename(guard, aside);
  } catch {
    return;
  }
  const moved = await fs.lstat(aside);
  if (moved.ino !== seen.ino) await fs.link(aside, guard).catch(() => undefined);
  await fs.rm(aside, { force: true });
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
