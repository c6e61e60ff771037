import { constants } from 'node:fs';
import path from 'node:path';
import * as fs from './promised-fs';

/**
 * Replaces `file` with `data` so that a crash at any instant leaves either the old file or the
 * new one, never a mix: write a temp file beside it, fsync it, rename it over the file, then
 * fsync the directory so the rename itself survives a power cut.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

/** fsync a directory, so entries created or renamed in it are durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
