import { promises as fs, constants } from 'node:fs';
import path from 'node:path';
import { StoreInUse } from './store-errors';

/** Lock files held by this process, so a second open in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * Takes the embedded store's directory for this process: a file `<dataDir>.lock` beside it,
 * created exclusively, holding this process's pid and the kernel's boot id. PGlite itself takes
 * no lock, and two processes on one data directory corrupt it. A lock whose holder is gone, or
 * was written before the last reboot (so a recycled pid is not mistaken for its holder), is
 * taken over. Returns the release function.
 */
export async function lockEmbeddedStore(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = `${path.resolve(dataDir)}.lock`;
  if (heldHere.has(lockFile)) throw new StoreInUse(dataDir, process.pid, lockFile);
  await fs.mkdir(path.dirname(lockFile), { recursive: true, mode: 0o700 });
  const me = `${process.pid} ${await bootId()}\n`;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    try {
      const handle = await fs.open(lockFile, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        await handle.writeFile(me);
      } finally {
        await handle.close();
      }
      heldHere.add(lockFile);
      return async () => {
        if (!heldHere.delete(lockFile)) return;
        if ((await readText(lockFile)) === me) await fs.rm(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = parseHolder(await readText(lockFile));
    if (holder === undefined && (await isFresh(lockFile))) {
      // Another process created it a moment ago and has not written its pid yet.
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    if (holder !== undefined && holder.boot === (await bootId()) && holder.pid !== process.pid && isAlive(holder.pid)) {
      throw new StoreInUse(dataDir, holder.pid, lockFile);
    }
    // Stale: its holder has exited, or the machine has restarted since it was written.
    await fs.rm(lockFile, { force: true });
  }
  throw new StoreInUse(dataDir, parseHolder(await readText(lockFile))?.pid ?? 0, lockFile);
}

let cachedBootId: string | undefined;

async function bootId(): Promise<string> {
  if (cachedBootId === undefined) {
    // Linux only; elsewhere every lock reads as written this boot and only the pid is checked.
    cachedBootId = (await readText('/proc/sys/kernel/random/boot_id'))?.trim() || 'unknown';
  }
  return cachedBootId;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string | undefined): { pid: number; boot: string } | undefined {
  const [pidText, boot] = (text ?? '').trim().split(/\s+/);
  const pid = Number.parseInt(pidText ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { pid, boot: boot ?? 'unknown' };
}

async function isFresh(file: string): Promise<boolean> {
  try {
    return Date.now() - (await fs.stat(file)).mtimeMs < 2000;
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
