import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { FileResource } from '../../../schema/resource';
import { resolveGroup, resolveUser } from './accounts';
import type { ApplyContext, Applier, ApplyOutcome, Observation, Removal } from './applier';
import { ApplyFailed } from './applier';
import { createMissingDirectories, formatMode, madeParents, ownershipDifferences, parseMode, setOwnerAndMode } from './directory.applier';
import { errnoCode, errorText, hostOwnPath, kindOf, lstatOrAbsent, resolveUnderRoot } from './root-path';

// A file is written whole and atomically: a temporary file beside it is written, given its mode
// and owner, synced, and renamed over the path, then the directory is synced. A reader (or a
// crash) sees the old file or the new one, never part of either. Only a regular file is ever
// replaced: a directory, link, socket or device at the path was put there by someone else, and
// writing over it could destroy what the host does not own, so apply refuses and says so.

// Files larger than this are compared by streaming rather than read whole.
const CHUNK = 1024 * 1024;
// A temporary name adds ".<name>.<12 hex>.tmp"; names are cut so it stays under NAME_MAX (255).
const MAX_TEMP_STEM = 200;
const READ_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Writes, checks and removes declared files. */
export const fileApplier: Applier<FileResource> = {
  shape: 'file',

  refuse(resource: FileResource, ctx: ApplyContext): string | undefined {
    return hostOwnPath(resource.path, ctx);
  },

  async observe(resource: FileResource, ctx: ApplyContext): Promise<Observation> {
    try {
      const real = await resolveUnderRoot(ctx.root, resource.path);
      const stats = await lstatOrAbsent(real);
      if (stats === undefined) return { present: false, differences: [`no file at ${resource.path}`] };
      if (!stats.isFile()) return { present: true, differences: [`${kindOf(stats)} is at ${resource.path}, where a file is declared`] };
      const want = declaredBytes(resource);
      const differences: string[] = [];
      const opened = await openRegular(real, resource.path);
      try {
        const current = await opened.stat();
        if (!(await sameContent(opened, current, want))) differences.push(`content differs (${current.size} bytes, declared ${want.length})`);
        const mode = current.mode & 0o7777;
        if (mode !== parseMode(resource.mode)) differences.push(`mode is ${formatMode(mode)}, declared ${resource.mode}`);
        differences.push(...(await ownershipDifferences(ctx.root, resource, current)));
      } finally {
        await opened.close();
      }
      return { present: true, differences };
    } catch (error) {
      const reason = error instanceof ApplyFailed ? error.message : `cannot read ${resource.path}: ${errorText(error)}`;
      return { present: false, differences: [reason], unreadable: reason };
    }
  },

  async apply(resource: FileResource, ctx: ApplyContext): Promise<ApplyOutcome> {
    if (ctx.signal?.aborted) throw new ApplyFailed(`stopped before writing ${resource.path}: the apply was left`);
    const want = declaredBytes(resource);
    const attributes = {
      mode: parseMode(resource.mode),
      uid: (await resolveUser(ctx.root, resource.owner)).id,
      gid: (await resolveGroup(ctx.root, resource.group)).id,
    };
    const real = await resolveUnderRoot(ctx.root, resource.path);
    try {
      const stats = await lstatOrAbsent(real);
      if (stats !== undefined && !stats.isFile()) {
        const instead = stats.isDirectory() ? ' or declare a directory' : '';
        throw new ApplyFailed(`${kindOf(stats)} is at ${resource.path}, where a file is declared; remove it by hand${instead}`);
      }
      if (stats !== undefined) {
        const opened = await openRegular(real, resource.path);
        try {
          // Content already right: fix mode and owner in place, keeping the inode (and anything
          // holding it open, like a running service's inotify watch).
          if (await sameContent(opened, await opened.stat(), want)) {
            await setOwnerAndMode(opened, attributes);
            return {};
          }
        } finally {
          await opened.close();
        }
      }
      const created = await createMissingDirectories(dirname(real));
      await writeAtomically(real, attributes, (handle) => handle.writeFile(want), ctx.signal);
      return created.length === 0 ? {} : { output: madeParents(resource.path, created.length) };
    } catch (error) {
      if (error instanceof ApplyFailed) throw error;
      throw new ApplyFailed(`could not write ${resource.path}: ${errorText(error)}`, { cause: error });
    }
  },

  async remove(key: string, ctx: ApplyContext): Promise<Removal> {
    const path = pathOfKey(key);
    const real = await resolveUnderRoot(ctx.root, path);
    await sweepStaleTemporaries(real);
    const stats = await lstatOrAbsent(real);
    if (stats === undefined) return 'removed';
    if (!stats.isFile()) {
      throw new ApplyFailed(`left ${path} in place: ${kindOf(stats)} is there now, not the file the host wrote; remove it by hand if it is not wanted`);
    }
    try {
      await unlink(real);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return 'removed';
      throw new ApplyFailed(`could not remove ${path}: ${errorText(error)}`, { cause: error });
    }
    await syncDirectory(dirname(real));
    return 'removed';
  },

  async keepOriginal(resource: FileResource, ctx: ApplyContext, dir: string): Promise<string | undefined> {
    // Only a regular file is ever written over (apply refuses anything else), so only a regular
    // file needs keeping. The copy is readable by root alone, whatever the original's mode (it
    // may hold secrets); its real mode and owner are in the sidecar beside it.
    const real = await resolveUnderRoot(ctx.root, resource.path);
    const stats = await lstatOrAbsent(real);
    if (stats === undefined || !stats.isFile()) return undefined;
    const kept = join(dir, resource.path);
    // The first copy is the machine's; keeping again would replace it with what the host wrote.
    if ((await lstatOrAbsent(kept)) !== undefined) return kept;
    await mkdir(dirname(kept), { recursive: true, mode: 0o700 });
    const source = await openRegular(real, resource.path);
    try {
      const original = await source.stat();
      await writeAtomically(kept, { mode: 0o600 }, (handle) => copyFrom(source, handle));
      const record = {
        path: resource.path,
        shape: 'file',
        mode: formatMode(original.mode),
        uid: original.uid,
        gid: original.gid,
        size: original.size,
        mtime: original.mtime.toISOString(),
      };
      await writeAtomically(`${kept}.meta.json`, { mode: 0o600 }, (handle) => handle.writeFile(`${JSON.stringify(record, null, 2)}\n`));
    } finally {
      await source.close();
    }
    return kept;
  },
};

/** The declared content as bytes: text is UTF-8, base64 is decoded. */
function declaredBytes(resource: FileResource): Buffer {
  return 'text' in resource.content ? Buffer.from(resource.content.text, 'utf8') : Buffer.from(resource.content.base64, 'base64');
}

/**
 * Writes `real` whole through a temporary file in the same directory (so the rename cannot cross
 * a file system): fill, chown, chmod, fsync, rename, fsync the directory. On any failure the
 * temporary file is removed and the old file is untouched.
 */
async function writeAtomically(
  real: string,
  attributes: { mode: number; uid?: number; gid?: number },
  fill: (handle: FileHandle) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const directory = dirname(real);
  await sweepStaleTemporaries(real);
  const temporary = join(directory, `${temporaryStem(real)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  let renamed = false;
  try {
    try {
      await fill(handle);
      if (attributes.uid !== undefined && attributes.gid !== undefined) await handle.chown(attributes.uid, attributes.gid);
      await handle.chmod(attributes.mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (signal?.aborted) throw new ApplyFailed(`stopped before replacing ${real}: the apply was left; the file is as it was`);
    await rename(temporary, real);
    renamed = true;
  } finally {
    if (!renamed) await rm(temporary, { force: true });
  }
  await syncDirectory(directory);
}

function temporaryStem(real: string): string {
  return `.${basename(real).slice(0, MAX_TEMP_STEM)}`;
}

/**
 * Removes temporary files a host killed mid-write left beside `real`. Only one host process
 * writes at a time (the store lock), so any temporary of this file found now is abandoned;
 * without this, a crash at the wrong instant would leave a file nobody owns.
 */
async function sweepStaleTemporaries(real: string): Promise<void> {
  const stem = temporaryStem(real);
  let names: string[];
  try {
    names = await readdir(dirname(real));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return;
    throw error;
  }
  const abandoned = names.filter((name) => name.startsWith(`${stem}.`) && /^[0-9a-f]{12}\.tmp$/.test(name.slice(stem.length + 1)));
  await Promise.all(abandoned.map((name) => rm(join(dirname(real), name), { force: true })));
}

/** fsync a directory, so a rename or unlink in it survives a crash. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems cannot sync a directory; the rename itself has still happened.
    if (errnoCode(error) !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}

/** Opens a regular file for reading without following a link or blocking on a pipe swapped in. */
async function openRegular(real: string, path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(real, READ_NOFOLLOW);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw new ApplyFailed(`a symbolic link is at ${path}, where a file is declared; remove it by hand`, { cause: error });
    throw error;
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new ApplyFailed(`${kindOf(stats)} is at ${path}, where a file is declared; remove it by hand`);
  }
  return handle;
}

/** Compares an open file with the declared bytes, reading no more than it must. */
async function sameContent(handle: FileHandle, stats: Stats, want: Buffer): Promise<boolean> {
  if (stats.size !== want.length) return false;
  const buffer = Buffer.alloc(Math.min(CHUNK, Math.max(want.length, 1)));
  for (let position = 0; position < want.length; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, want.length - position), position);
    if (bytesRead === 0) return false;
    if (!buffer.subarray(0, bytesRead).equals(want.subarray(position, position + bytesRead))) return false;
    position += bytesRead;
  }
  // The file grew while it was read: not the declared content.
  const { bytesRead } = await handle.read(buffer, 0, 1, want.length);
  return bytesRead === 0;
}

async function copyFrom(source: FileHandle, target: FileHandle): Promise<void> {
  const buffer = Buffer.alloc(CHUNK);
  for (let position = 0; ; ) {
    const { bytesRead } = await source.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    for (let written = 0; written < bytesRead; ) {
      written += (await target.write(buffer, written, bytesRead - written)).bytesWritten;
    }
    position += bytesRead;
  }
}

function pathOfKey(key: string): string {
  const path = key.startsWith('file:') ? key.slice('file:'.length) : key;
  if (!path.startsWith('/')) throw new ApplyFailed(`${JSON.stringify(key)} is not a file resource key like "file:/etc/motd"`);
  return path;
}
