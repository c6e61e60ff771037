import { promises as fs, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { STATE_FILE } from '../store/host-store';

/**
 * Waits, without holding the store, until the store holds an identity (someone ran `enrol`),
 * or `signal` aborts. Looks again whenever the state directory changes and every `pollMs` in
 * any case (a change notification can be missed, on some file systems it never comes). The
 * file is only read here; the caller takes the lock and loads it properly.
 */
export async function waitForIdentity(stateDir: string, signal: AbortSignal, pollMs: number): Promise<boolean> {
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
      if (await holdsIdentity(stateDir)) return true;
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

async function holdsIdentity(stateDir: string): Promise<boolean> {
  try {
    const state = JSON.parse(await fs.readFile(path.join(stateDir, STATE_FILE), 'utf8')) as { identity?: unknown };
    return typeof state.identity === 'object' && state.identity !== null;
  } catch {
    return false;
  }
}
