import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import * as path from 'node:path';
import * as fs from '../fs/promised-fs';
import { decodeBase64, encodeBase64 } from './base64';
import { KeyFileExists, KeyFileMalformed, KeyFileMissing, KeyFileTooOpen } from './key-errors';

/** What a caller can say about the key it expects in a file. */
export interface ReadKeyFileOptions {
  /** Bytes the key must have (32 for a seed or public key). */
  bytes?: number;
  /** The next step when there is no file, e.g. the command that creates it. */
  whenMissing?: string;
}

/**
 * Reads one base64 key from a file the owner alone can read. A file that group or other can
 * read or write is refused before its content is read: a secret that others could have read is
 * no longer known to be secret, and saying so is better than using it quietly.
 */
export async function readKeyFile(file: string, options: ReadKeyFileOptions = {}): Promise<Uint8Array> {
  let handle: fs.OpenFile;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new KeyFileMissing(file, options.whenMissing ?? 'check the path; the key is created by the command that set this machine up');
    if (code === 'ELOOP') throw new KeyFileMalformed(file, 'it is a symbolic link; point the configuration at the file itself');
    throw error;
  }
  try {
    // fstat on the open descriptor: the mode checked is the mode of the file actually read.
    const stat = await handle.stat();
    if (!stat.isFile()) throw new KeyFileMalformed(file, 'it is not a regular file');
    if ((stat.mode & 0o077) !== 0) throw new KeyFileTooOpen(file, stat.mode);
    // A key is one short line; anything large is some other file given by mistake.
    if (stat.size > 4096) throw new KeyFileMalformed(file, `it is ${stat.size} bytes, far more than one key`);
    const text = (await handle.readFile('utf8')).trim();
    const key = decodeBase64(text);
    if (key === undefined || key.length === 0) throw new KeyFileMalformed(file, 'it is not one line of base64');
    if (options.bytes !== undefined && key.length !== options.bytes) {
      throw new KeyFileMalformed(file, `the key is ${key.length} bytes, expected ${options.bytes}`);
    }
    return key;
  } finally {
    await handle.close();
  }
}

/** Whether `writeKeyFile` may replace an existing file. */
export interface WriteKeyFileOptions {
  overwrite?: boolean;
}

/**
 * Writes a key as one base64 line, mode 0600, atomically: a temporary file beside it is
 * written and synced, then linked into place (refusing to replace an existing key unless
 * `overwrite`), and the directory is synced. A crash leaves either no key or the whole key.
 */
export async function writeKeyFile(file: string, key: Uint8Array, options: WriteKeyFileOptions = {}): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(temp, 'wx', 0o600);
  try {
    // The umask can only remove bits; chmod makes the mode exactly 0600 whatever it was.
    await handle.chmod(0o600);
    await handle.writeFile(`${encodeBase64(key)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (options.overwrite === true) {
      await fs.rename(temp, file);
    } else {
      try {
        await fs.link(temp, file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new KeyFileExists(file);
        throw error;
      }
    }
  } finally {
    await fs.rm(temp, { force: true });
  }
  const dirHandle = await fs.open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}
