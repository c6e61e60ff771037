import fs from 'node:fs';
import { Readable } from 'node:stream';

/**
 * A readable stream of an open file descriptor, read with `fs.read` from its current offset:
 * what Node's `fs.ReadStream` does for a standard input that is a file, without the module
 * behind it (see {@link useDirectFileStdin}). The descriptor is never closed by the stream.
 */
export class DescriptorInput extends Readable {
  constructor(
    /** The descriptor read; 0 for the standard input. */
    readonly fd: number,
  ) {
    super();
  }

  override _read(size: number): void {
    const buffer = Buffer.allocUnsafe(size);
    fs.read(this.fd, buffer, 0, size, null, (error, bytes) => {
      if (error !== null) this.destroy(error);
      else this.push(bytes === 0 ? null : buffer.subarray(0, bytes));
    });
  }
}

/**
 * Whether descriptor `fd` is what Node would open as a file stream: a regular file, or the null
 * device. A terminal, a pipe or a socket gets Node's own stream (from `tty` or `net`, which a
 * process with an output loads anyway).
 */
export function isFileInput(fd: number, nullDevice = '/dev/null'): boolean {
  let stats: fs.Stats;
  try {
    stats = fs.fstatSync(fd);
  } catch {
    return false; // closed: Node's own answer (an empty stream) is the right one
  }
  if (stats.isFile()) return true;
  if (!stats.isCharacterDevice()) return false;
  try {
    return stats.rdev === fs.statSync(nullDevice).rdev;
  } catch {
    return false;
  }
}

/**
 * Gives `process.stdin` a {@link DescriptorInput} when the standard input is a file or
 * /dev/null, which is what a host started by the init, or by the launcher (a background job of a
 * shell reads /dev/null), always has. Call it before clipanion loads: clipanion reads
 * `process.stdin` as it loads, and for a file Node would make an `fs.ReadStream`, whose first use
 * loads `fs/promises`' FileHandle and with it readline and the file watchers, some 0.4 MB that
 * stay resident for as long as the host runs. The host's verbs never read their input; were one
 * to, it reads the same bytes from the same offset.
 */
export function useDirectFileStdin(target: NodeJS.Process = process): void {
  if (!isFileInput(0)) return;
  let stdin: DescriptorInput | undefined;
  Object.defineProperty(target, 'stdin', {
    configurable: true,
    enumerable: true,
    get: () => (stdin ??= new DescriptorInput(0)),
  });
}
