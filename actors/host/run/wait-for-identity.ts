import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { LAST_GOOD_FILE, STATE_FILE } from '../store/store-files';

/**
 * Waits, without holding the store, until the store holds an identity (someone ran `enrol`),
 * or `signal` aborts; with `except`, an identity whose nkey is not that one (a revoked
 * identity replaced by enrolling again). Looks again whenever the state directory changes and every `pollMs` in
 * any case (a change notification can be missed, on some file systems it never comes). The
 * file is only read here; the caller takes the lock and loads it properly.
 */
export async function waitForIdentity(stateDir: string, signal: AbortSignal, pollMs: number, except?: string): Promise<boolean> {
  let wake: () => void = () => undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(stateDir, () => wake());
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined;
  }
  try {
    while (!signal.aborted) {
      if (await holdsIdentity(stateDir, except)) return true;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = () => undefined;
          resolve();
        };
        const timer = setTimeout(done, pollMs);
        wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return false;
  } finally {
    watcher?.close();
  }
}

/**
 * Whether the store plainly holds no identity, read without the store's code (a hosted host
 * loads none of it): no store at all, or a state.json that is JSON, of format 1, whose identity
 * is null. Anything else, a store that is damaged included, is for the store itself to look at
 * (openHost), which says what is wrong.
 */
export async function plainlyHosted(stateDir: string): Promise<boolean> {
  const read = (name: string): Promise<string | undefined> => fs.readFile(path.join(stateDir, name), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  try {
    const text = await read(STATE_FILE);
    if (text === undefined) return (await read(LAST_GOOD_FILE)) === undefined;
    const state = JSON.parse(text) as { format?: unknown; identity?: unknown };
    return typeof state === 'object' && state !== null && state.format === 1 && state.identity === null;
  } catch {
    return false;
  }
}

async function holdsIdentity(stateDir: string, except: string | undefined): Promise<boolean> {
  try {
    const state = JSON.parse(await fs.readFile(path.join(stateDir, STATE_FILE), 'utf8')) as { identity?: { nkey_public?: unknown } | null };
    return typeof state.identity === 'object' && state.identity !== null && (except === undefined || state.identity.nkey_public !== except);
  } catch {
    return false;
  }
}
