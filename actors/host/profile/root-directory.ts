import { resolve } from 'node:path';
import { stat } from '../../shared/fs/promised-fs';
import { OperatorError } from '../../shared/operator-error';
import { isAbsence } from './entry-kind';

/** `--root` names a directory that does not exist. */
export class RootDirectoryMissing extends OperatorError {
  /** The directory as resolved. */
  readonly path: string;
  constructor(path: string, cause?: unknown) {
    super('the root directory does not exist', {
      value: path,
      next: 'give --root the directory where the machine is mounted (e.g. --root /mnt/target), or leave --root out to read this machine',
      cause,
    });
    this.path = path;
  }
}

/** `--root` names something that is not a directory (a file, an image not mounted). */
export class RootNotADirectory extends OperatorError {
  /** The path as resolved. */
  readonly path: string;
  constructor(path: string) {
    super('the root is not a directory', {
      value: path,
      next: 'mount the image or disk first and give --root its mount point, or leave --root out to read this machine',
    });
    this.path = path;
  }
}

/** `--root` names a path that cannot be looked at (permission denied, a link loop). */
export class RootDirectoryUnreadable extends OperatorError {
  /** The directory as resolved. */
  readonly path: string;
  constructor(path: string, cause: unknown) {
    super(`the root directory cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, {
      value: path,
      next: 'check the path and the links and permissions on the way to it, or run the command as root',
      cause,
    });
    this.path = path;
  }
}

/**
 * Checks a `--root` option before anything is read under it, and returns it as an absolute
 * path. Without the check a mistyped root reads as an empty machine: every answer `none`, and
 * nothing said.
 */
export async function requireRootDirectory(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    const stats = await stat(absolute);
    if (!stats.isDirectory()) throw new RootNotADirectory(absolute);
    return absolute;
  } catch (error) {
    if (error instanceof OperatorError) throw error;
    if (isAbsence(error)) throw new RootDirectoryMissing(absolute, error);
    throw new RootDirectoryUnreadable(absolute, error);
  }
}
