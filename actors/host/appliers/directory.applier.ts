import { closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { DirectoryResource } from '../../../schema/resource';
import { describeAccount, resolveGroup, resolveUser, UnknownAccount } from './accounts';
import type { ApplyContext, Applier, ApplyOutcome, HandBack, Observation, Removal } from './applier';
import { ApplyFailed } from './applier';
import type { HeldDirectory } from './root-path';
import { errnoCode, errorText, holdParentUnderRoot, hostOwnPath, kindOf, lstatOrAbsentSync } from './root-path';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { replaceFilesSync } from '../store/replace-files-sync';
import { readKeptRecord } from '../adoption/kept-record';

// A directory resource is the directory itself (its existence, mode and ownership), never its
// contents. So removal takes away only an empty directory: anything inside was put there by
// someone else (a package, a service, a person), and the host removes only what it made. A
// directory left because it is not empty is reported as a failed removal with what it holds,
// so the person reading the report decides; it is never removed recursively.
//
// The system calls are synchronous, for the reason given in root-path.ts. What is made, changed
// or removed under the root is reached through the parent the host checked and holds open
// (holdParentUnderRoot), so a directory swapped for a link after the check is not followed.

const SHOWN_ENTRIES = 5;

/** Creates, checks and removes declared directories. */
export const directoryApplier: Applier<DirectoryResource> = {
  shape: 'directory',

  refuse(resource: DirectoryResource, ctx: ApplyContext): string | undefined {
    return hostOwnPath(resource.path, ctx);
  },

  async observe(resource: DirectoryResource, ctx: ApplyContext): Promise<Observation> {
    try {
      // Through the held parent, as it is written (see file.applier.ts observe).
      const stats = lookThroughParent(ctx, resource.path, true);
      if (stats === undefined) return { present: false, differences: [`no directory at ${resource.path}`] };
      if (!stats.isDirectory()) {
        return { present: true, differences: [`${kindOf(stats)} is at ${resource.path}, where a directory is declared`] };
      }
      const differences = await attributeDifferences(resource, ctx, stats);
      return { present: true, differences };
    } catch (error) {
      const reason = error instanceof ApplyFailed ? error.message : `cannot read ${resource.path}: ${errorText(error)}`;
      return { present: false, differences: [reason], unreadable: reason };
    }
  },

  async apply(resource: DirectoryResource, ctx: ApplyContext): Promise<ApplyOutcome> {
    if (ctx.signal?.aborted) throw new ApplyFailed(`stopped before making ${resource.path}: the apply was left`);
    const mode = parseMode(resource.mode);
    const uid = (await resolveUser(ctx.root, resource.owner, ctx.pass?.accounts)).id;
    const gid = (await resolveGroup(ctx.root, resource.group, ctx.pass?.accounts)).id;
    let held: ReturnType<typeof holdParentUnderRoot> | undefined;
    try {
      held = holdParentUnderRoot(ctx, resource.path, { make: true });
      const here = (held.directory as HeldDirectory).at(held.leaf);
      const stats = lstatOrAbsentSync(here);
      if (stats !== undefined && !stats.isDirectory()) {
        const instead = stats.isFile() ? ' or declare a file' : '';
        throw new ApplyFailed(`${kindOf(stats)} is at ${resource.path}, where a directory is declared; remove it by hand${instead}`);
      }
      // Made closed, then opened up to the declared mode once it has the declared owner, so it is
      // never reachable with the declared mode and the wrong owner.
      if (stats === undefined) mkdirSync(here, { mode: 0o700 });
      setAttributes(here, resource.path, { mode, uid, gid });
      return madeOutcome(resource.path, held.made.length);
    } catch (error) {
      if (error instanceof ApplyFailed) throw error;
      throw new ApplyFailed(`could not make ${resource.path}: ${errorText(error)}`, { cause: error });
    } finally {
      held?.directory?.close();
    }
  },

  async remove(key: string, ctx: ApplyContext): Promise<Removal> {
    const path = pathOfKey(key);
    const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false });
    if (directory === undefined) return 'removed';
    let entries: string[];
    try {
      const here = directory.at(leaf);
      const stats = lstatOrAbsentSync(here);
      if (stats === undefined) return 'removed';
      if (!stats.isDirectory()) {
        throw new ApplyFailed(`left ${path} in place: ${kindOf(stats)} is there now, not the directory the host made; remove it by hand if it is not wanted`);
      }
      try {
        rmdirSync(here);
        return 'removed';
      } catch (error) {
        const code = errnoCode(error);
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw new ApplyFailed(`could not remove ${path}: ${errorText(error)}`, { cause: error });
      }
      entries = readdirSync(here).sort();
    } finally {
      directory.close();
    }
    const shown = entries.slice(0, SHOWN_ENTRIES).join(', ');
    const more = entries.length > SHOWN_ENTRIES ? ` and ${entries.length - SHOWN_ENTRIES} more` : '';
    throw new ApplyFailed(
      `left ${path} in place: it holds files the host does not own (${shown}${more}); ` +
        'the host removes only what it made. Move them away and remove the directory by hand, or declare it again',
    );
  },

  async keepOriginal(resource: DirectoryResource, ctx: ApplyContext, dir: string): Promise<string | undefined> {
    // Applying changes only the directory's mode and owner, so those are what is kept; the
    // contents are not the resource and are never touched.
    const stats = lookThroughParent(ctx, resource.path);
    if (stats === undefined || !stats.isDirectory()) return undefined;
    const kept = `${join(dir, resource.path)}.meta.json`;
    // The first copy is the machine's; keeping again would record what the host had set.
    if (lstatOrAbsentSync(kept) !== undefined) return kept;
    mkdirSync(dirname(kept), { recursive: true, mode: 0o700 });
    const record = {
      path: resource.path,
      shape: 'directory',
      mode: formatMode(stats.mode),
      uid: stats.uid,
      gid: stats.gid,
      mtime: utcTimestamp(stats.mtime),
    };
    // Written whole or not at all: the record's presence is what says the original is kept, so
    // a host killed while writing it must not leave a part of one for the next host to trust.
    replaceFilesSync(dirname(kept), [{ name: basename(kept), data: `${JSON.stringify(record, null, 2)}\n` }]);
    return kept;
  },

  async handBack(key: string, ctx: ApplyContext, dir: string): Promise<HandBack | undefined> {
    // What was kept is the record of the directory's mode and owner (its contents were never
    // the host's), so that is what goes back; the directory stays.
    const path = pathOfKey(key);
    const kept = `${join(dir, path)}.meta.json`;
    if (lstatOrAbsentSync(kept) === undefined) return undefined;
    const record = readKeptRecord(kept, kept);
    const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false });
    if (directory === undefined) {
      throw new ApplyFailed(`could not put the machine's ${path} back as it was: ${dirname(path)} is no longer a directory; make it again, or set it by hand as its original recorded at ${kept} says`);
    }
    try {
      const here = directory.at(leaf);
      const stats = lstatOrAbsentSync(here);
      // Someone else's now: left alone for good, the record of the original kept for them.
      if (stats !== undefined && !stats.isDirectory()) {
        return { outcome: 'forgotten', what: `left ${path} in place: ${kindOf(stats)} is there now, not the directory the host held; the machine's original stays recorded at ${kept}` };
      }
      // Gone meanwhile: made again as the machine had it, since it was the machine's.
      if (stats === undefined) {
        mkdirSync(here, { mode: 0o700 });
        fsyncSync(directory.fd);
      }
      setAttributes(here, path, record);
    } catch (error) {
      if (error instanceof ApplyFailed) throw error;
      throw new ApplyFailed(`could not put the machine's ${path} back as it was: ${errorText(error)}; its original stays recorded at ${kept}`, { cause: error });
    } finally {
      directory.close();
    }
    rmSync(kept, { force: true });
    return { outcome: 'handed_back', what: `mode ${formatMode(record.mode)}, owner ${record.uid}:${record.gid}` };
  },
};

/** What is at a declared path, looked at through its held parent; undefined when nothing is. */
function lookThroughParent(ctx: ApplyContext, path: string, look = false): ReturnType<typeof lstatOrAbsentSync> {
  const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false, look });
  if (directory === undefined) return undefined;
  try {
    return lstatOrAbsentSync(directory.at(leaf));
  } finally {
    directory.close();
  }
}

/**
 * Takes away a directory the host made on the way to a declared path (HostState
 * made_directories) once it is empty: `gone` when it is no longer there, `kept` when something
 * is in it (the machine's own files, which the host never removes) or it is no longer a
 * directory. Never recursive.
 */
export function removeMadeDirectory(path: string, ctx: Pick<ApplyContext, 'root' | 'stateDir' | 'pass' | 'fdDirectory' | 'raceWindow'>): 'gone' | 'kept' {
  const { directory, leaf } = holdParentUnderRoot(ctx, path, { make: false });
  if (directory === undefined) return 'gone';
  try {
    const here = directory.at(leaf);
    const stats = lstatOrAbsentSync(here);
    if (stats === undefined) return 'gone';
    if (!stats.isDirectory()) return 'kept';
    rmdirSync(here);
    return 'gone';
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return 'gone';
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EBUSY' || code === 'EACCES' || code === 'EPERM') return 'kept';
    throw error;
  } finally {
    directory.close();
  }
}

/**
 * Sets a directory's owner and mode through a descriptor opened without following a link, so a
 * link swapped in meanwhile is refused rather than followed.
 */
function setAttributes(here: string, path: string, want: { mode: number; uid: number; gid: number }): void {
  let fd: number;
  try {
    fd = openSync(here, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOTDIR' || code === 'ELOOP') throw new ApplyFailed(`${path} is not a directory (it changed while the host worked); apply again`, { cause: error });
    throw error;
  }
  try {
    setOwnerAndMode(fd, want);
  } finally {
    closeSync(fd);
  }
}

/**
 * Sets owner and mode on an open file or directory, each only when it differs, so an unchanged
 * inode is left alone. Owner first: chown clears setuid and setgid bits, which the mode may
 * declare, so the mode is set again after any chown. Synced, so a crash keeps what was reported.
 */
export function setOwnerAndMode(fd: number, want: { mode: number; uid: number; gid: number }): void {
  const stats = fstatSync(fd);
  const chown = stats.uid !== want.uid || stats.gid !== want.gid;
  if (chown) fchownSync(fd, want.uid, want.gid);
  if (chown || (stats.mode & 0o7777) !== want.mode) fchmodSync(fd, want.mode);
  if (chown || (stats.mode & 0o7777) !== want.mode) fsyncSync(fd);
}

async function attributeDifferences(resource: DirectoryResource, ctx: Pick<ApplyContext, 'root' | 'pass'>, stats: { mode: number; uid: number; gid: number }): Promise<string[]> {
  const differences: string[] = [];
  const mode = stats.mode & 0o7777;
  if (mode !== parseMode(resource.mode)) differences.push(`mode is ${formatMode(mode)}, declared ${resource.mode}`);
  differences.push(...(await ownershipDifferences(ctx, resource, stats)));
  return differences;
}

/**
 * The owner and group lines of an observation: `owner is 1000, declared 0 (root)`. A declared
 * name the machine does not know is itself the difference (apply then refuses with the reason).
 */
export async function ownershipDifferences(
  ctx: Pick<ApplyContext, 'root' | 'pass'>,
  declared: { owner: string; group: string },
  stats: { uid: number; gid: number },
): Promise<string[]> {
  const differences: string[] = [];
  const sides = [
    ['owner', () => resolveUser(ctx.root, declared.owner, ctx.pass?.accounts), stats.uid, declared.owner],
    ['group', () => resolveGroup(ctx.root, declared.group, ctx.pass?.accounts), stats.gid, declared.group],
  ] as const;
  for (const [what, resolveIt, actual, name] of sides) {
    try {
      const account = await resolveIt();
      if (account.id !== actual) differences.push(`${what} is ${actual}, declared ${describeAccount(account)}`);
    } catch (error) {
      if (!(error instanceof UnknownAccount)) throw error;
      differences.push(`${what} is ${actual}, declared ${JSON.stringify(name)}, which is not in ${error.file}`);
    }
  }
  return differences;
}

/** A declared octal mode ("0644") as a number. */
export function parseMode(mode: string): number {
  return Number.parseInt(mode, 8) & 0o7777;
}

/** A mode as a person writes it: four octal digits ("0644"). */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/** The outcome line for directories made on the way to a declared path. */
export function madeParents(path: string, count: number): string {
  return `created ${count === 1 ? 'the parent directory' : 'parent directories'} ${madeAncestors(path, count).join(', ')} (0755 root)`;
}

/** The declared paths of the directories made on the way to `path`: its last `count` ancestors, outermost first. */
export function madeAncestors(path: string, count: number): string[] {
  const parents = path.split('/').slice(1, -1);
  const ancestors = parents.map((_, index) => `/${parents.slice(0, index + 1).join('/')}`);
  return ancestors.slice(Math.max(0, ancestors.length - count));
}

/** What an apply that made `count` directories on the way to `path` says about them. */
export function madeOutcome(path: string, count: number): ApplyOutcome {
  return count === 0 ? {} : { output: madeParents(path, count), madeDirectories: madeAncestors(path, count) };
}

function pathOfKey(key: string): string {
  const path = key.startsWith('directory:') ? key.slice('directory:'.length) : key;
  if (!path.startsWith('/')) throw new ApplyFailed(`${JSON.stringify(key)} is not a directory resource key like "directory:/srv/app"`);
  return path;
}
