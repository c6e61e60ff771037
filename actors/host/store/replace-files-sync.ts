import { closeSync, constants, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** One file to replace: its name inside the directory and its new bytes. */
export interface FileReplacement {
  name: string;
  data: string | Uint8Array;
  /**
   * False for a copy that is kept for something other than crash safety (the store's last-good
   * copy, against damage from outside): its data is not synced before its rename, so a power
   * cut may leave it short, and whoever relies on it must check it and mend it (HostStore does
   * on open). Defaults to true.
   */
  sync?: boolean;
}

/**
 * Replaces several files of one directory, each atomically, so that a crash at any instant
 * leaves every one of them either old or new, never a mix within a file: every new file is
 * written beside its target and fsynced, then they are renamed over their targets in the order
 * given, then the directory is fsynced once so the renames survive a power cut. No rename
 * happens before the data of all of them is durable (but for a file given `sync: false`). Until the directory fsync has returned any
 * subset of the renames may be lost, so a caller must not act on the new contents before this
 * returns.
 *
 * Synchronous on purpose, like the file appliers: for a store of a few kilobytes, the round
 * trips through the thread pool that the promise API takes for each of the dozen steps cost
 * several times the CPU of the writes themselves. The event loop waits for the disk during the
 * fsyncs, which it would have to before going on anyway.
 */
export function replaceFilesSync(dir: string, files: readonly FileReplacement[], mode = 0o600): void {
  const temps: string[] = [];
  try {
    for (const file of files) {
      const temp = path.join(dir, `.${file.name}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
      const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
      temps.push(temp);
      try {
        writeAll(fd, typeof file.data === 'string' ? Buffer.from(file.data, 'utf8') : file.data);
        // The umask may have taken bits off the mode given to open.
        fchmodSync(fd, mode);
        if (file.sync !== false) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    files.forEach((file, index) => {
      renameSync(temps[index] as string, path.join(dir, file.name));
      temps[index] = '';
    });
  } finally {
    for (const temp of temps) if (temp !== '') rmSync(temp, { force: true });
  }
  syncDirectorySync(dir);
}

/** fsync a directory, so entries created or renamed in it are durable. */
export function syncDirectorySync(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
}
