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
 * happens before the data of all of them is durable (but for a file given `sync: false`). Until
 * the directory fsync has returned any subset of the renames may be lost, so a caller must not
 * act on the new contents before this returns.
 *
 * Synchronous on purpose, like the file appliers: for a store of a few kilobytes, the round
 * trips through the thread pool that the promise API takes for each of the dozen steps cost
 * several times the CPU of the writes themselves. The event loop waits for the disk during the
 * fsyncs, which it would have to before going on anyway.
 */
export function replaceFilesSync(dir: string, files: readonly FileReplacement[], mode = 0o600): void {
  commitStagedSync(stageFilesSync(dir, files, mode));
}

/** New files written and synced beside their targets, not renamed into place yet. */
export interface StagedFiles {
  dir: string;
  /** Each target's name and its temporary's path, in the order given. */
  temps: Array<{ name: string; temp: string }>;
}

/**
 * The first half of replaceFilesSync: every new file written beside its target and synced
 * (but for `sync: false`). Nothing is renamed, so until commitStagedSync nothing a reader sees
 * has changed; a caller that gives up calls discardStagedSync. Split so that a caller can let
 * other syncs run meanwhile (HostStore.save: the directories the store is about to record).
 */
export function stageFilesSync(dir: string, files: readonly FileReplacement[], mode = 0o600): StagedFiles {
  const staged: StagedFiles = { dir, temps: [] };
  try {
    for (const file of files) {
      const temp = path.join(dir, `.${file.name}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
      const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
      staged.temps.push({ name: file.name, temp });
      try {
        writeAll(fd, typeof file.data === 'string' ? Buffer.from(file.data, 'utf8') : file.data);
        // The umask may have taken bits off the mode given to open.
        fchmodSync(fd, mode);
        if (file.sync !== false) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    discardStagedSync(staged);
    throw error;
  }
  return staged;
}

/** The second half of replaceFilesSync: the renames, in order, then one sync of the directory. */
export function commitStagedSync(staged: StagedFiles): void {
  try {
    for (const entry of staged.temps) {
      renameSync(entry.temp, path.join(staged.dir, entry.name));
      entry.temp = '';
    }
  } finally {
    discardStagedSync(staged);
  }
  syncDirectorySync(staged.dir);
}

/** Removes the temporaries of `staged` not renamed yet. */
export function discardStagedSync(staged: StagedFiles): void {
  for (const entry of staged.temps) if (entry.temp !== '') rmSync(entry.temp, { force: true });
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
