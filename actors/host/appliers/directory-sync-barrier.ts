import { constants } from 'node:fs';
import { open } from '../../shared/fs/promised-fs';
import { errnoCode } from './root-path';

/**
 * Directories whose entries changed (a file renamed in, a temporary removed) and still need an
 * fsync for the change to survive a crash. An applier that is handed a barrier registers the
 * directory instead of syncing it after every file; whoever records the work as done (converge,
 * before it writes the store) calls `flush` first, so the store never says a file is in place
 * before the rename that put it there is durable. A thousand files in one directory then cost
 * one directory sync, not a thousand.
 */
export class DirectorySyncBarrier {
  readonly #pending = new Set<string>();

  /** Notes that `directory` needs an fsync before the work in it is recorded. */
  changed(directory: string): void {
    this.#pending.add(directory);
  }

  /** How many directories wait for their sync. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Syncs every directory noted since the last flush, side by side. */
  async flush(): Promise<void> {
    const directories = [...this.#pending];
    this.#pending.clear();
    const failures: unknown[] = [];
    await Promise.all(directories.map((directory) => syncDirectory(directory).catch((error: unknown) => failures.push(error))));
    if (failures.length > 0) {
      // Still owed: the next flush tries them again, and the caller records nothing meanwhile.
      directories.forEach((directory) => this.#pending.add(directory));
      throw failures[0];
    }
  }
}

/** fsync a directory, so a rename or unlink in it survives a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    // A directory removed since (a release took it away) has nothing left to make durable.
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot sync a directory; the rename itself has still happened.
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}
