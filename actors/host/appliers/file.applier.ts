import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, fsync, fsyncSync, futimesSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { FileResource } from '../../../schema/resource';
import { resolveGroup, resolveUser } from './accounts';
import { FILE_SYSTEM_SYNC_FROM, syncFileSystemsOf } from './sync-file-systems';
import type { ApplyContext, Applier, ApplyOutcome, HandBack, Observation, Removal } from './applier';
import { ApplyFailed } from './applier';
import { formatMode, madeOutcome, ownershipDifferences, parseMode, setOwnerAndMode } from './directory.applier';
import type { HeldDirectory } from './root-path';
import { childPath, errnoCode, errorText, holdOwnDirectory, holdParentUnderRoot, hostOwnPath, kindOf, lstatOrAbsentSync, resolveUnderRootSync } from './root-path';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { readKeptRecord } from '../adoption/kept-record';
import { fileContentBytes, unresolvedSecret } from './sealed-content';

// A file is written whole and atomically: a temporary file beside it is written, given its mode
// and owner, synced (many prepared at once: with one syncfs per file system), and renamed over the path, then the directory is synced. A reader (or a
// crash) sees the old file or the new one, never part of either. Only a regular file is ever
// replaced: a directory, link, socket or device at the path was put there by someone else, and
// writing over it could destroy what the host does not own, so apply refuses and says so.
//
// The system calls are synchronous, for the reason given in root-path.ts: small files on a local
// disk, where a thread-pool round trip per call cost more than the calls themselves. Every
// write, rename, chmod, chown and removal under the root goes through the parent directory the
// host checked and holds open (holdParentUnderRoot), never through the path again, so a
// directory swapped for a link after the check is not followed. Looking (observe) goes through
// it too, so a swap cannot have the host report on a file outside the root. A pass holds each
// directory once (held-directories.ts), not once per file.

// Files larger than this are compared by streaming rather than read whole.
const CHUNK = 1024 * 1024;
// A temporary name adds ".<name>.<12 hex>.tmp"; names are cut so it stays under NAME_MAX (255).
const MAX_TEMP_STEM = 200;
const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
// A temporary is `.<name>.nox-<12 hex>.tmp`: marked, so a sweep of a directory never takes a
// file of some other program's that happens to end in hex and `.tmp`.
const TEMPORARY_MARK = 'nox-';
const TEMPORARY_NAME = /^\..+\.nox-[0-9a-f]{12}\.tmp$/;

/** Writes, checks and removes declared files. */
export const fileApplier: Applier<FileResource> = {
  shape: 'file',

  refuse(resource: FileResource, ctx: ApplyContext): string | undefined {
    return hostOwnPath(resource.path, ctx) ?? unresolvedSecret(resource);
  },

  tidy(resource: FileResource, ctx: ApplyContext): void {
    // Swept once per directory and host (see sweepStaleTemporaries): held only when not yet.
    if (swept.get(ctx.runner)?.has(dirname(resolveUnderRootSync(ctx, resource.path))) === true) return;
    const { directory } = holdParentUnderRoot(ctx, resource.path, { make: false });
    if (directory === undefined) return;
    try {
      sweepStaleTemporaries(directory, ctx);
    } finally {
      directory.close();
    }
  },

  async observe(resource: FileResource, ctx: ApplyContext): Promise<Observation> {
    try {
      // Looked at through the held parent, as it is written: a directory swapped for a link
      // after the check cannot make the host report on (or take for its own) a file outside.
      const opened = openThroughParent(ctx, resource.path);
      if (opened === undefined) return { present: false, differences: [`no file at ${resource.path}`] };
      if ('kind' in opened) return { present: true, differences: [`${opened.kind} is at ${resource.path}, where a file is declared`] };
      const differences: string[] = [];
      try {
        const want = await fileContentBytes(resource, ctx);
        const current = opened.stats;
        if (!sameContent(opened.fd, current, want)) differences.push(`content differs (${current.size} bytes, declared ${want.length})`);
        const mode = current.mode & 0o7777;
        if (mode !== parseMode(resource.mode)) differences.push(`mode is ${formatMode(mode)}, declared ${resource.mode}`);
        differences.push(...(await ownershipDifferences(ctx, resource, current)));
      } finally {
        closeSync(opened.fd);
      }
      return { present: true, differences };
    } catch (error) {
      const reason = error instanceof ApplyFailed ? error.message : `cannot read ${resource.path}: ${errorText(error)}`;
      return { present: false, differences: [reason], unreadable: reason };
    }
  },

  async prepare(resources: readonly FileResource[], ctx: ApplyContext): Promise<void> {
    const staged: Array<{ fd: number; real: string; entry: PreparedFile }> = [];
    for (const resource of resources) {
      if (ctx.signal?.aborted) break;
      const made = await stageFile(resource, ctx).catch(() => undefined);
      if (made !== undefined) staged.push(made);
    }
    // Many at once: one syncfs per file system (see sync-file-systems.ts). Otherwise, or when
    // that fails, synced side by side: a journalling file system commits concurrent syncs
    // together, where one after another each waits for its own commit.
    const together = staged.length >= FILE_SYSTEM_SYNC_FROM && await syncFileSystemsOf(staged.map(({ fd }) => fd), staged.map(({ entry }) => entry.temporary));
    const synced = together
      ? staged.map(() => true)
      : await inParallel(staged, PREPARE_SYNCS, ({ fd }) => new Promise<boolean>((resolve) => fsync(fd, (error) => resolve(error === null))));
    const kept = preparedOf(ctx);
    staged.forEach(({ fd, real, entry }, index) => {
      closeSync(fd);
      if (synced[index] === true) kept.set(real, entry);
      else discardTemporary(entry, ctx);
    });
  },

  discardPrepared(ctx: ApplyContext): void {
    const kept = prepared.get(ctx);
    if (kept === undefined) return;
    for (const entry of kept.values()) discardTemporary(entry, ctx);
    kept.clear();
  },

  async apply(resource: FileResource, ctx: ApplyContext): Promise<ApplyOutcome> {
    if (ctx.signal?.aborted) throw new ApplyFailed(`stopped before writing ${resource.path}: the apply was left`);
    const want = await fileContentBytes(resource, ctx);
    const attributes = {
      mode: parseMode(resource.mode),
      uid: (await resolveUser(ctx.root, resource.owner, ctx.pass?.accounts)).id,
      gid: (await resolveGroup(ctx.root, resource.group, ctx.pass?.accounts)).id,
    };
    let held: ReturnType<typeof holdParentUnderRoot> | undefined;
    try {
      held = holdParentUnderRoot(ctx, resource.path, { make: true });
      const directory = held.directory as HeldDirectory;
      const here = directory.at(held.leaf);
      const stats = lstatOrAbsentSync(here);
      if (stats !== undefined && !stats.isFile()) {
        const instead = stats.isDirectory() ? ' or declare a directory' : '';
        throw new ApplyFailed(`${kindOf(stats)} is at ${resource.path}, where a file is declared; remove it by hand${instead}`);
      }
      if (stats !== undefined) {
        const opened = openRegular(here, resource.path);
        try {
          // Content already right: fix mode and owner in place, keeping the inode (and anything
          // holding it open, like a running service's inotify watch). Not when the inode has
          // other names: one may be a hard link from outside the root to a file that is not
          // the host's, whose mode and owner would change with it. It is replaced instead.
          if (soleName(opened.stats) && sameContent(opened.fd, opened.stats, want)) {
            setOwnerAndMode(opened.fd, attributes);
            return {};
          }
        } finally {
          closeSync(opened.fd);
        }
      }
      if (!putPreparedInPlace(held.real, directory, held.leaf, want, attributes, ctx)) {
        writeAtomically(directory, held.leaf, attributes, (fd) => writeAll(fd, want), ctx, ctx.signal);
      }
      return madeOutcome(resource.path, held.made.length);
    } catch (error) {
      if (error instanceof ApplyFailed) throw error;
      throw new ApplyFailed(`could not write ${resource.path}: ${errorText(error)}`, { cause: error });
    } finally {
      held?.directory?.close();
    }
  },

  async remove(key: string, ctx: ApplyContext): Promise<Removal> {
    const path = pathOfKey(key);
    const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false });
    if (directory === undefined) return 'removed';
    try {
      sweepStaleTemporaries(directory, ctx);
      const here = directory.at(leaf);
      const stats = lstatOrAbsentSync(here);
      if (stats === undefined) return 'removed';
      if (!stats.isFile()) {
        throw new ApplyFailed(`left ${path} in place: ${kindOf(stats)} is there now, not the file the host wrote; remove it by hand if it is not wanted`);
      }
      try {
        unlinkSync(here);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return 'removed';
        throw new ApplyFailed(`could not remove ${path}: ${errorText(error)}`, { cause: error });
      }
      // With a barrier, the directory is synced once before the store records the batch's
      // removals (converge flushes it), not once per file removed.
      if (ctx.barrier === undefined) syncHeld(directory);
      else ctx.barrier.changed(directory.real);
      return 'removed';
    } finally {
      directory.close();
    }
  },

  async keepOriginal(resource: FileResource, ctx: ApplyContext, dir: string): Promise<string | undefined> {
    // Only a regular file is ever written over (apply refuses anything else), so only a regular
    // file needs keeping. The copy is readable by root alone, whatever the original's mode (it
    // may hold secrets); its real mode and owner are in the sidecar beside it.
    const { directory, leaf } = holdParentUnderRoot(ctx, resource.path, { make: false });
    if (directory === undefined) return undefined;
    let source: { fd: number; stats: Stats } | undefined;
    try {
      const stats = lstatOrAbsentSync(directory.at(leaf));
      if (stats === undefined || !stats.isFile()) return undefined;
      source = openRegular(directory.at(leaf), resource.path);
    } finally {
      directory.close();
    }
    const kept = join(dir, resource.path);
    try {
      // The first copy is the machine's; keeping again would replace it with what the host wrote.
      if (lstatOrAbsentSync(kept) !== undefined) return kept;
      mkdirSync(dirname(kept), { recursive: true, mode: 0o700 });
      const opened = source;
      const original = opened.stats;
      const record = {
        path: resource.path,
        shape: 'file',
        mode: formatMode(original.mode),
        uid: original.uid,
        gid: original.gid,
        size: original.size,
        mtime: utcTimestamp(original.mtime),
      };
      // The record first, then the copy: whether the original is kept is told by the copy, so a
      // host killed between the two keeps it again, record and all, on its next try, where the
      // other order would have left a copy without its record for good.
      const keptIn = holdOwnDirectory(dirname(kept), ctx.fdDirectory);
      try {
        writeAtomically(keptIn, `${basename(kept)}.meta.json`, { mode: 0o600 }, (fd) => writeAll(fd, Buffer.from(`${JSON.stringify(record, null, 2)}\n`)), ctx);
        writeAtomically(keptIn, basename(kept), { mode: 0o600 }, (fd) => copyFrom(opened.fd, fd), ctx);
      } finally {
        keptIn.close();
      }
    } finally {
      closeSync(source.fd);
    }
    return kept;
  },

  async handBack(key: string, ctx: ApplyContext, dir: string): Promise<HandBack | undefined> {
    const path = pathOfKey(key);
    const kept = join(dir, path);
    if (lstatOrAbsentSync(kept) === undefined) return undefined;
    const record = readKeptRecord(`${kept}.meta.json`, kept);
    const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false });
    if (directory === undefined) {
      throw new ApplyFailed(`cannot put the machine's original of ${path} back: ${dirname(path)} is no longer a directory; make it again, or copy the original kept at ${kept} by hand`);
    }
    try {
      const stats = lstatOrAbsentSync(directory.at(leaf));
      // Not the host's file any more, and not the machine's original: someone else's, left alone
      // for good (trying again every pass would change nothing), the original kept for them.
      if (stats !== undefined && !stats.isFile()) {
        return { outcome: 'forgotten', what: `left ${path} in place: ${kindOf(stats)} is there now, not the file the host wrote; the machine's original stays kept at ${kept}, to put back by hand if it is wanted` };
      }
      const source = openRegular(kept, kept);
      try {
        // Synced whole before the copy goes (no barrier here): the copy is the only other place
        // the machine's content is.
        writeAtomically(directory, leaf, record, (fd) => {
          copyFrom(source.fd, fd);
          if (record.mtime !== undefined) futimesSync(fd, record.mtime, record.mtime);
        }, { ...ctx, barrier: undefined });
      } catch (error) {
        if (error instanceof ApplyFailed) throw error;
        throw new ApplyFailed(`could not put the machine's original of ${path} back: ${errorText(error)}; it stays kept at ${kept}`, { cause: error });
      } finally {
        closeSync(source.fd);
      }
    } finally {
      directory.close();
    }
    // The copy first, then its record: a host killed between the two finds no copy, and the
    // briefing line that still says where it was kept tells it the original is back.
    unlinkSync(kept);
    syncDirectory(dirname(kept));
    rmSync(`${kept}.meta.json`, { force: true });
    return { outcome: 'handed_back', what: `content, mode ${formatMode(record.mode)}, owner ${record.uid}:${record.gid}` };
  },
};

/** A file's new content, written and synced beside it by `prepare`, waiting for its rename. */
interface PreparedFile {
  /** The declared path it is for. */
  path: string;
  /** The temporary's real path, for messages. */
  temporary: string;
  /** Its name in its directory. */
  temporaryName: string;
  /** The directory it was made in, as held then: it is renamed only into that same directory. */
  dev: number;
  ino: number;
  bytes: Buffer;
  mode: number;
  uid: number;
  gid: number;
}

// Syncs in flight at once while preparing: enough for the journal to commit them together.
const PREPARE_SYNCS = 16;

// Prepared files per apply context, by the real path they are for.
const prepared = new WeakMap<ApplyContext, Map<string, PreparedFile>>();

function preparedOf(ctx: ApplyContext): Map<string, PreparedFile> {
  let kept = prepared.get(ctx);
  if (kept === undefined) prepared.set(ctx, (kept = new Map()));
  return kept;
}

/**
 * Writes a file's declared content to a temporary beside it, with its mode and owner, unsynced,
 * and returns it open; undefined when there is nothing to prepare (the content is already
 * right, the directory does not exist yet, something other than a file is there): `apply` then
 * does what is needed, and says what is wrong.
 */
async function stageFile(resource: FileResource, ctx: ApplyContext): Promise<{ fd: number; real: string; entry: PreparedFile } | undefined> {
  const real = resolveUnderRootSync(ctx, resource.path);
  // Prepared already, by an earlier call for the same batch.
  if (prepared.get(ctx)?.has(real) === true) return undefined;
  const held = holdParentUnderRoot(ctx, resource.path, { make: false });
  if (held.directory === undefined) return undefined;
  try {
    return await stageIn(held.directory, held.leaf, held.real, resource, ctx);
  } finally {
    held.directory.close();
  }
}

async function stageIn(directory: HeldDirectory, leaf: string, real: string, resource: FileResource, ctx: ApplyContext): Promise<{ fd: number; real: string; entry: PreparedFile } | undefined> {
  const bytes = await fileContentBytes(resource, ctx);
  const present = lstatOrAbsentSync(directory.at(leaf));
  if (present !== undefined) {
    if (!present.isFile()) return undefined;
    const opened = openRegular(directory.at(leaf), resource.path);
    try {
      if (soleName(opened.stats) && sameContent(opened.fd, opened.stats, bytes)) return undefined;
    } finally {
      closeSync(opened.fd);
    }
  }
  const mode = parseMode(resource.mode);
  const uid = (await resolveUser(ctx.root, resource.owner, ctx.pass?.accounts)).id;
  const gid = (await resolveGroup(ctx.root, resource.group, ctx.pass?.accounts)).id;
  // Swept before anything is put there, so the sweep never takes a prepared file for a leftover.
  sweepStaleTemporaries(directory, ctx);
  const temporaryName = temporaryNameFor(leaf);
  const fd = openSync(directory.at(temporaryName), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeAll(fd, bytes);
    fchownSync(fd, uid, gid);
    fchmodSync(fd, mode);
  } catch (error) {
    closeSync(fd);
    rmSync(directory.at(temporaryName), { force: true });
    throw error;
  }
  const { dev, ino } = directory.identity();
  // A held directory's real path and a name of one segment: see childPath.
  return { fd, real, entry: { path: resource.path, temporary: childPath(directory.real, temporaryName), temporaryName, dev, ino, bytes, mode, uid, gid } };
}

// A temporary not used is removed through its directory, held again and checked to be the one
// it was made in. One whose directory was moved or swapped meanwhile is left where it is: a
// marked temporary, which the next host to write there sweeps.
function discardTemporary(entry: PreparedFile, ctx: ApplyContext): void {
  let held: ReturnType<typeof holdParentUnderRoot>;
  try {
    held = holdParentUnderRoot(ctx, entry.path, { make: false });
  } catch {
    return;
  }
  const { directory } = held;
  if (directory === undefined) return;
  try {
    const { dev, ino } = directory.identity();
    if (dev === entry.dev && ino === entry.ino) rmSync(directory.at(entry.temporaryName), { force: true });
  } finally {
    directory.close();
  }
}

/**
 * Renames the prepared content of `real` over it, when what was prepared is still exactly what
 * is declared; false when there is none (or it is gone), and the caller writes it itself.
 */
function putPreparedInPlace(real: string, directory: HeldDirectory, leaf: string, want: Buffer, attributes: { mode: number; uid: number; gid: number }, ctx: ApplyContext): boolean {
  const kept = prepared.get(ctx);
  const entry = kept?.get(real);
  if (kept === undefined || entry === undefined) return false;
  kept.delete(real);
  const same = entry.bytes.equals(want) && entry.mode === attributes.mode && entry.uid === attributes.uid && entry.gid === attributes.gid;
  const held = directory.identity();
  if (!same || ctx.signal?.aborted || held.dev !== entry.dev || held.ino !== entry.ino) {
    discardTemporary(entry, ctx);
    return false;
  }
  try {
    renameSync(directory.at(entry.temporaryName), directory.at(leaf));
  } catch (error) {
    rmSync(directory.at(entry.temporaryName), { force: true });
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
  if (ctx.barrier === undefined) syncHeld(directory);
  else ctx.barrier.changed(directory.real);
  return true;
}

/** Runs `work` over `items` with at most `width` at once; the results in the items' order. */
async function inParallel<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

/**
 * Writes `leaf` in a held directory whole through a temporary file beside it (so the rename
 * cannot cross a file system): fill, chown, chmod, fsync, rename, fsync the directory. On any
 * failure the temporary file is removed and the old file is untouched.
 */
function writeAtomically(
  directory: HeldDirectory,
  leaf: string,
  attributes: { mode: number; uid?: number; gid?: number },
  fill: (fd: number) => void,
  ctx: ApplyContext,
  signal?: AbortSignal,
): void {
  sweepStaleTemporaries(directory, ctx);
  const temporary = directory.at(temporaryNameFor(leaf));
  const real = join(directory.real, leaf);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  let renamed = false;
  try {
    try {
      fill(fd);
      if (attributes.uid !== undefined && attributes.gid !== undefined) fchownSync(fd, attributes.uid, attributes.gid);
      fchmodSync(fd, attributes.mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (signal?.aborted) throw new ApplyFailed(`stopped before replacing ${real}: the apply was left; the file is as it was`);
    renameSync(temporary, directory.at(leaf));
    renamed = true;
  } finally {
    if (!renamed) rmSync(temporary, { force: true });
  }
  if (ctx.barrier === undefined) syncHeld(directory);
  else ctx.barrier.changed(directory.real);
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
}

function temporaryNameFor(leaf: string): string {
  temporaryCount = (temporaryCount + 1) % TEMPORARY_SPACE;
  return `.${leaf.slice(0, MAX_TEMP_STEM)}.${TEMPORARY_MARK}${temporaryCount.toString(16).padStart(12, '0')}.tmp`;
}

// The 12 hex digits of a temporary's name count up from a random start, one start per process:
// as unlikely as 48 random bits to meet a name a killed host left (the create is exclusive
// either way), without asking the system for random bytes on every file written, which took
// a tenth of the CPU of writing a small file.
const TEMPORARY_SPACE = 2 ** 48;
let temporaryCount = randomBytes(6).readUIntBE(0, 6);

// Directories already swept, per host. The apply context is made again for every pass, with its
// signal and its memo; the runner is the host's own, made once with it (HostContext), so it is
// what stands for "this host" here.
const swept = new WeakMap<object, Set<string>>();

/**
 * Removes temporary files a host killed mid-write left beside `real`. Only one host process
 * writes at a time (the store lock), so any temporary of this file found now is abandoned;
 * without this, a crash at the wrong instant would leave a file nobody owns.
 *
 * Each directory is swept once per host: a temporary can only be left by a host that was
 * killed, which is a host that came before this one, and this host removes its own temporaries
 * when a write fails. Sweeping before every write read a directory of a thousand files a
 * thousand times.
 */
function sweepStaleTemporaries(directory: HeldDirectory, ctx: ApplyContext): void {
  let done = swept.get(ctx.runner);
  if (done === undefined) swept.set(ctx.runner, (done = new Set()));
  if (done.has(directory.real)) return;
  const names = readdirSync(directory.at('.'));
  done.add(directory.real);
  for (const name of names) if (TEMPORARY_NAME.test(name)) rmSync(directory.at(name), { force: true });
}

/** fsync a held directory, so a rename or unlink in it survives a crash. */
function syncHeld(directory: HeldDirectory): void {
  try {
    fsyncSync(directory.fd);
  } catch (error) {
    // Some file systems cannot sync a directory; the rename itself has still happened.
    if (errnoCode(error) !== 'EINVAL') throw error;
  }
}

/** fsync a directory by its path (the host's own state directory), so an unlink in it survives a crash. */
function syncDirectory(directory: string): void {
  const fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } catch (error) {
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens the file at a declared path for reading through its held parent (looking only): undefined
 * when nothing is there (or its directory is missing), the kind of what is there when it is not
 * a regular file.
 */
function openThroughParent(ctx: ApplyContext, path: string): { fd: number; stats: Stats } | { kind: string } | undefined {
  const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false, look: true });
  if (directory === undefined) return undefined;
  try {
    const here = directory.at(leaf);
    const stats = lstatOrAbsentSync(here);
    if (stats === undefined) return undefined;
    if (!stats.isFile()) return { kind: kindOf(stats) };
    return openRegular(here, path);
  } finally {
    directory.close();
  }
}

/** Opens a regular file for reading without following a link or blocking on a pipe swapped in. */
function openRegular(real: string, path: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(real, READ_NOFOLLOW);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw new ApplyFailed(`a symbolic link is at ${path}, where a file is declared; remove it by hand`, { cause: error });
    throw error;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new ApplyFailed(`${kindOf(stats)} is at ${path}, where a file is declared; remove it by hand`);
  }
  return { fd, stats };
}

/**
 * True when the file has no other name (one link). A file with more than one is never written,
 * chmod-ed or chown-ed in place, only replaced by a new file renamed over its declared name:
 * another name may be a hard link made from outside the root, or to a file the host does not
 * own, and changing the shared inode would change that file too.
 */
function soleName(stats: Stats): boolean {
  return stats.nlink <= 1;
}

/** Compares an open file with the declared bytes, reading no more than it must. */
function sameContent(fd: number, stats: Stats, want: Buffer): boolean {
  if (stats.size !== want.length) return false;
  // One byte more than declared is asked for: a file that grew while it was read is not the
  // declared content, and the extra byte says so without a second read.
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, want.length + 1));
  for (let position = 0; position <= want.length; ) {
    const bytesRead = readSync(fd, buffer, 0, Math.min(buffer.length, want.length + 1 - position), position);
    if (bytesRead === 0) return position === want.length;
    if (position + bytesRead > want.length) return false;
    if (!buffer.subarray(0, bytesRead).equals(want.subarray(position, position + bytesRead))) return false;
    position += bytesRead;
  }
  return false;
}

function copyFrom(source: number, target: number): void {
  const buffer = Buffer.allocUnsafe(CHUNK);
  for (let position = 0; ; ) {
    const bytesRead = readSync(source, buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    for (let written = 0; written < bytesRead; ) written += writeSync(target, buffer, written, bytesRead - written);
    position += bytesRead;
  }
}

function pathOfKey(key: string): string {
  const path = key.startsWith('file:') ? key.slice('file:'.length) : key;
  if (!path.startsWith('/')) throw new ApplyFailed(`${JSON.stringify(key)} is not a file resource key like "file:/etc/motd"`);
  return path;
}
