import { childProcess } from '../../shared/process/child-process';
import { fstatSync } from 'node:fs';

/**
 * Fewer files than this are synced one by one: below it, starting `sync` costs more than it saves.
 */
export const FILE_SYSTEM_SYNC_FROM = 32;

/**
 * Makes everything written to the open files `fds` (at `paths`) durable with one syncfs(2) per
 * file system they are on, by running `sync -f` (coreutils, and busybox's with its fancy options)
 * on one path of each. True when that worked; false when it could not be run or failed (an old
 * busybox without `-f`, a writeback error), and the caller then syncs each file itself, which
 * also finds which file an error belongs to. `command` is `sync` from PATH unless a test says.
 *
 * Why: a thousand fsyncs are a thousand writes and a thousand cache flushes for the disk, and on
 * a virtual machine whose disk is rate-limited they were most of an apply. One syncfs lets the
 * kernel write the same data in a few large requests and flush once. The guarantee is the one
 * fsync gives (on Linux 5.8 and later syncfs reports writeback errors as fsync does): every byte
 * is on disk before any rename that exposes it. The price is that the sync also waits for other
 * programs' unwritten data on the same file systems.
 */
export async function syncFileSystemsOf(fds: readonly number[], paths: readonly string[], command = 'sync'): Promise<boolean> {
  const onePathPerFileSystem = new Map<number, string>();
  try {
    fds.forEach((fd, index) => {
      const device = fstatSync(fd).dev;
      if (!onePathPerFileSystem.has(device)) onePathPerFileSystem.set(device, paths[index] as string);
    });
  } catch {
    return false;
  }
  if (onePathPerFileSystem.size === 0) return true;
  return new Promise<boolean>((resolve) => {
    const sync = childProcess().spawn(command, ['-f', ...onePathPerFileSystem.values()], { stdio: 'ignore' });
    sync.once('error', () => resolve(false));
    sync.once('close', (code) => resolve(code === 0));
  });
}
