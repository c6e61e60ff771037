import { access } from '../../shared/fs/promised-fs';

/**
 * True when `file` can be reached: a link is followed, and anything that stops the look (absent,
 * a dangling link, no permission) reads as not there. For what a machine has, asked in passing
 * (a kept original, an enabled marker, a package database), where "cannot tell" is "not there".
 */
export async function pathExists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
