import { promises as fs } from 'node:fs';

/**
 * True when anything is at `file`: a file, a directory, or a link, even one that points nowhere
 * (it is not followed). For refusing to write over what is there, so a path that cannot be
 * looked at (a directory without permission) is not taken for free: that error is thrown.
 */
export async function isPathTaken(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
