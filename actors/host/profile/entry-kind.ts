import { lstat, stat } from '../../shared/fs/promised-fs';

/** What is at a path, as far as profile detection cares; `unreadable` when the look itself failed. */
export type EntryKind = 'file' | 'directory' | 'socket' | 'symlink' | 'other' | 'missing' | 'unreadable';

/**
 * Looks at one path without throwing. `missing` covers both "no such entry" and "a component on
 * the way is not a directory", because either way there is nothing there; any other failure
 * (permission denied, I/O) is `unreadable`, so a caller can say "unknown" instead of "none".
 * Symbolic links are followed unless `follow` is false, since distributions link whole
 * directories (`/lib` → `usr/lib`) and a program may be a link to its real file.
 */
export async function entryKind(path: string, options: { follow?: boolean } = {}): Promise<EntryKind> {
  try {
    const stats = options.follow === false ? await lstat(path) : await stat(path);
    if (stats.isFile()) return 'file';
    if (stats.isDirectory()) return 'directory';
    if (stats.isSocket()) return 'socket';
    if (stats.isSymbolicLink()) return 'symlink';
    return 'other';
  } catch (error) {
    return isAbsence(error) ? 'missing' : 'unreadable';
  }
}

/** True when a file-system error means "nothing is there" rather than "could not look". */
export function isAbsence(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** True when something (anything) is at the path; a link to nothing counts, as it was put there. */
export async function isPresent(path: string): Promise<boolean> {
  const kind = await entryKind(path, { follow: false });
  return kind !== 'missing' && kind !== 'unreadable';
}
