import { closeSync, lstatSync, readlinkSync } from 'node:fs';
import type { Identity } from './root-path';

/**
 * The directories a pass holds open, by their real path, so that a thousand files in one
 * directory open its chain from the root once rather than a thousand times (root-path.ts,
 * holdParentUnderRoot). Each was opened from the root one component at a time, never following
 * a link, and checked against the device and inode the walk found; a later hold reuses it only
 * when the walk finds that same directory again and the kernel still names the descriptor by
 * the same real path (see {@link HeldDirectories.take}). At most {@link HELD_AT_ONCE} are kept;
 * converge closes them all when its pass ends (PassMemo.close).
 */
export class HeldDirectories {
  readonly #entries = new Map<string, HeldEntry>();
  readonly #limit: number;

  constructor(limit = HELD_AT_ONCE) {
    this.#limit = limit;
  }

  /** How many descriptors are open now. */
  get open(): number {
    return this.#entries.size;
  }

  /**
   * The descriptor held for `real` when it is still the directory `checked` (the walk's device
   * and inode) and still at `real`. On a way that passes through someone else's directory, the
   * kernel's name for the descriptor (/proc/self/fd/N) is read: a directory moved, renamed or
   * reached through a swapped component since is not reused, and the caller opens the chain
   * from the root again, which refuses the swap as it always did. On a way of root's (or the
   * host's own) directories alone, which the pass already trusts not to be swapped under it
   * (the walk is remembered for the pass, see walkUnderRoot), a look at `real` is enough to
   * see that an action of the pass removed or replaced it: about a fifth of the cost of reading
   * a name under /proc. A mismatch closes the stale descriptor (when no one uses it).
   */
  take(real: string, checked: Identity, fdDirectory: string, trustedWay: boolean): { fd: number; dev: number; ino: number; release: () => void } | undefined {
    const entry = this.#entries.get(real);
    if (entry === undefined) return undefined;
    const still = trustedWay ? sameAt(real, entry) : namedAt(fdDirectory, entry.fd, real);
    if (entry.dev === checked.dev && entry.ino === checked.ino && still) {
      entry.users += 1;
      return { fd: entry.fd, dev: entry.dev, ino: entry.ino, release: () => this.#release(real, entry) };
    }
    this.#drop(real, entry);
    return undefined;
  }

  /**
   * Keeps `fd`, just opened and checked as the directory at `real`, for later holds; returns
   * the release the caller runs instead of closing it, or undefined when it is not kept (the
   * limit reached with every kept one in use, or another descriptor in use for the same path),
   * and the caller closes it itself.
   */
  keep(real: string, fd: number, identity: { dev: number; ino: number }): (() => void) | undefined {
    const present = this.#entries.get(real);
    if (present !== undefined) {
      if (present.users > 0) return undefined;
      this.#drop(real, present);
    }
    if (this.#entries.size >= this.#limit && !this.#evictOne()) return undefined;
    const entry: HeldEntry = { fd, dev: identity.dev, ino: identity.ino, users: 1, closed: false };
    this.#entries.set(real, entry);
    return () => this.#release(real, entry);
  }

  /** Closes every descriptor held; one still in use is closed when its user releases it. */
  close(): void {
    for (const [real, entry] of [...this.#entries]) this.#drop(real, entry);
  }

  #release(real: string, entry: HeldEntry): void {
    entry.users = Math.max(0, entry.users - 1);
    if (entry.users === 0 && this.#entries.get(real) !== entry) closeOnce(entry);
  }

  #drop(real: string, entry: HeldEntry): void {
    if (this.#entries.get(real) === entry) this.#entries.delete(real);
    if (entry.users === 0) closeOnce(entry);
  }

  // The oldest kept directory no one is using makes room; false when every one is in use.
  #evictOne(): boolean {
    for (const [real, entry] of this.#entries) {
      if (entry.users > 0) continue;
      this.#drop(real, entry);
      return true;
    }
    return false;
  }
}

/**
 * Directories a pass keeps open at most: well under the default limit of 1,024 descriptors with
 * a batch's 256 prepared temporaries open beside them, and more than a declaration spreads its
 * files over in practice.
 */
export const HELD_AT_ONCE = 64;

interface HeldEntry {
  fd: number;
  dev: number;
  ino: number;
  /** Holds that have it now and have not released it. */
  users: number;
  closed: boolean;
}

function closeOnce(entry: HeldEntry): void {
  if (entry.closed) return;
  entry.closed = true;
  closeSync(entry.fd);
}

// The directory at `real` now is the one held: not removed, replaced or moved away.
function sameAt(real: string, entry: HeldEntry): boolean {
  const stats = lstatSync(real, { throwIfNoEntry: false });
  return stats !== undefined && stats.isDirectory() && stats.dev === entry.dev && stats.ino === entry.ino;
}

// The kernel names an open directory by where it is now (d_path): moved, its name or a
// directory above it renamed, or removed (" (deleted)"), the name changes with it.
function namedAt(fdDirectory: string, fd: number, real: string): boolean {
  try {
    return readlinkSync(`${fdDirectory}/${fd}`) === real;
  } catch {
    return false;
  }
}
