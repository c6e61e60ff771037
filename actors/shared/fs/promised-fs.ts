import fs from 'node:fs';
import type { Dirent, MakeDirectoryOptions, Mode, OpenMode, PathLike, RmOptions, Stats, WriteFileOptions } from 'node:fs';

/**
 * The file system calls the host makes, as promises over Node's callback `fs`.
 *
 * Why not `node:fs/promises`: loading it loads Node's readline interface, the file watchers and
 * the directory iterator with it (its FileHandle can do all of those), and they stay loaded for
 * the life of the process. Measured in a process holding the host's other built-in modules, that
 * is about 0.45 MB of resident memory, in a host whose whole idle budget is 50 MB. The callback
 * functions behind these are the ones `fs/promises` would have run in the thread pool anyway;
 * each rejects with the same `ErrnoException` (`code`, `syscall`, `path`).
 *
 * Kept to what the host calls. The controller, a larger process with other budgets, uses
 * `node:fs/promises` directly.
 */

/** Settles a promise from a Node callback that yields a value. */
function settled<T>(resolve: (value: T) => void, reject: (error: unknown) => void): (error: NodeJS.ErrnoException | null, value: T) => void {
  return (error, value) => (error === null ? resolve(value) : reject(error));
}

/** Settles a promise from a Node callback that yields nothing. */
function done(resolve: () => void, reject: (error: unknown) => void): (error: NodeJS.ErrnoException | null) => void {
  return (error) => (error === null ? resolve() : reject(error));
}

/** `fs.access`: resolves when `file` can be reached with `mode` (default: it exists). */
export function access(file: PathLike, mode?: number): Promise<void> {
  return new Promise((resolve, reject) => fs.access(file, mode, done(resolve, reject)));
}

/** `fs.copyFile`. */
export function copyFile(source: PathLike, destination: PathLike, mode = 0): Promise<void> {
  return new Promise((resolve, reject) => fs.copyFile(source, destination, mode, done(resolve, reject)));
}

/** `fs.link`: a hard link `newPath` to `existingPath`; EEXIST when `newPath` is taken. */
export function link(existingPath: PathLike, newPath: PathLike): Promise<void> {
  return new Promise((resolve, reject) => fs.link(existingPath, newPath, done(resolve, reject)));
}

/** `fs.stat`, following symbolic links. */
export function stat(file: PathLike): Promise<Stats> {
  return new Promise((resolve, reject) => fs.stat(file, settled(resolve, reject)));
}

/** `fs.lstat`: the entry itself, a symbolic link included. */
export function lstat(file: PathLike): Promise<Stats> {
  return new Promise((resolve, reject) => fs.lstat(file, settled(resolve, reject)));
}

/** `fs.mkdir`; with `recursive`, resolves with the first directory it made, if any. */
export function mkdir(dir: PathLike, options?: Mode | MakeDirectoryOptions): Promise<string | undefined> {
  return new Promise((resolve, reject) => fs.mkdir(dir, options, settled<string | undefined>(resolve, reject)));
}

/** `fs.readdir`: the names in `dir`, or with `withFileTypes` its entries. */
export function readdir(dir: PathLike): Promise<string[]>;
export function readdir(dir: PathLike, options: { withFileTypes: true }): Promise<Dirent[]>;
export function readdir(dir: PathLike, options?: { withFileTypes: true }): Promise<string[] | Dirent[]> {
  return new Promise((resolve, reject) => {
    if (options?.withFileTypes === true) fs.readdir(dir, { withFileTypes: true }, settled<Dirent[]>(resolve, reject));
    else fs.readdir(dir, settled<string[]>(resolve, reject));
  });
}

/** `fs.readFile`: the whole file, as text in `encoding` or as bytes. */
export function readFile(file: PathLike | number, encoding: BufferEncoding): Promise<string>;
export function readFile(file: PathLike | number): Promise<Buffer>;
export function readFile(file: PathLike | number, encoding?: BufferEncoding): Promise<string | Buffer> {
  return new Promise((resolve, reject) => {
    if (encoding === undefined) fs.readFile(file, settled<Buffer>(resolve, reject));
    else fs.readFile(file, encoding, settled<string>(resolve, reject));
  });
}

/** `fs.writeFile`: replaces (or, by its flag, appends to) the file with all of `data`. */
export function writeFile(file: PathLike | number, data: string | Uint8Array, options: WriteFileOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => fs.writeFile(file, data, options, done(resolve, reject)));
}

/** `fs.rename`: atomic within one file system. */
export function rename(oldPath: PathLike, newPath: PathLike): Promise<void> {
  return new Promise((resolve, reject) => fs.rename(oldPath, newPath, done(resolve, reject)));
}

/** `fs.rm`: with `force`, a missing path is not an error; with `recursive`, a whole tree. */
export function rm(file: PathLike, options: RmOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => fs.rm(file, options, done(resolve, reject)));
}

/** `fs.open`, as an {@link OpenFile}; close it in a `finally`. */
export function open(file: PathLike, flags: OpenMode, mode?: Mode): Promise<OpenFile> {
  return new Promise((resolve, reject) => fs.open(file, flags, mode, (error, fd) => (error === null ? resolve(new OpenFile(fd)) : reject(error))));
}

/**
 * A file descriptor opened by {@link open}: the part of `fs/promises`' FileHandle the host uses.
 * Reads and writes that take no position go on from the descriptor's offset, as there.
 */
export class OpenFile {
  #closed: Promise<void> | undefined;

  constructor(
    /** The descriptor; not to be used after `close`. */
    readonly fd: number,
  ) {}

  /** `fstat`: the file actually opened, whatever has since been renamed over its path. */
  stat(): Promise<Stats> {
    return new Promise((resolve, reject) => fs.fstat(this.fd, settled(resolve, reject)));
  }

  /** `fchmod`: exactly `mode`, whatever the umask took away when it was created. */
  chmod(mode: Mode): Promise<void> {
    return new Promise((resolve, reject) => fs.fchmod(this.fd, mode, done(resolve, reject)));
  }

  /** `fsync`: what was written, and the file's metadata, reach the disk. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => fs.fsync(this.fd, done(resolve, reject)));
  }

  /** Reads up to `buffer.length` bytes at `position` (or at the offset); resolves with how many. */
  read(buffer: Uint8Array, position: number | null = null): Promise<number> {
    return new Promise((resolve, reject) => fs.read(this.fd, buffer, 0, buffer.length, position, settled<number>(resolve, reject)));
  }

  /** Reads the rest of the file from the offset, as text. */
  readFile(encoding: BufferEncoding): Promise<string> {
    return readFile(this.fd, encoding);
  }

  /** Writes all of `data` from the offset, however many writes that takes. */
  writeFile(data: string | Uint8Array, encoding: BufferEncoding = 'utf8'): Promise<void> {
    return writeFile(this.fd, data, { encoding });
  }

  /**
   * Closes the descriptor. Closing again resolves as the first close did and closes nothing:
   * the number may by then belong to a file someone else opened.
   */
  close(): Promise<void> {
    this.#closed ??= new Promise((resolve, reject) => fs.close(this.fd, done(resolve, reject)));
    return this.#closed;
  }
}
