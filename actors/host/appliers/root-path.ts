import type { Stats } from 'node:fs';
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { ApplyContext } from './applier';
import { ApplyFailed } from './applier';
import { ownPathRefusal } from '../../shared/host-unit/own-unit';

// Where a declared path lands on this machine. Under a root other than `/` (a test root, an
// image being prepared) a symbolic link inside the root may point anywhere on the real machine;
// following it would have the host write outside the machine it was told to manage, so a link
// that leads out is refused, never followed. The last component is never followed: the
// appliers look at it with lstat and refuse what is not theirs to replace. Nor may a path lead
// into the host's state directory, by a link or by any other name for it: that is compared on
// real paths, on the real machine as under a test root.
//
// The look-ups are synchronous system calls. A pass over a thousand files makes ten thousand of
// them, each a few microseconds on a local file system; through the thread pool each costs a
// round trip of tens of microseconds more, which made the no-op pass ten times slower. Converge
// gives the event loop its turn between batches, so the link and heartbeats still run during a
// long pass.

/**
 * A path component under the root is a symbolic link leading outside the root. The host does
 * not follow it: what is out there is not the machine it manages.
 */
export class PathEscapesRoot extends ApplyFailed {
  /** The declared path being resolved. */
  readonly path: string;
  /** The real path of the link. */
  readonly link: string;
  /** Where the link leads. */
  readonly target: string;
  constructor(path: string, link: string, target: string, root: string) {
    super(
      `${path} leads outside the root ${root}: ${link} is a symbolic link to ${target}; ` +
        'the host does not follow it out. Replace the link with a directory, or point it inside the root',
    );
    this.path = path;
    this.link = link;
    this.target = target;
  }
}

/**
 * A declared path resolves into the host's state directory through a symbolic link (or a
 * directory that leads there by another name). Written, it could corrupt the store or plant a
 * "kept original" for adoption to hand back, so the host refuses it wherever it is met.
 */
export class PathInStateDirectory extends ApplyFailed {
  /** The declared path being resolved. */
  readonly path: string;
  /** The last symbolic link followed on the way, when one was. */
  readonly link: string | undefined;
  /** Where that link leads. */
  readonly target: string | undefined;
  constructor(path: string, stateDir: string, via: FollowedLink | undefined) {
    const how = via === undefined ? `it resolves to ${stateDir} or under it` : `${via.link} is a symbolic link to ${via.target}`;
    super(
      `${path} leads into the host's state directory ${stateDir}: ${how}; ` +
        'the host never writes its own store for a declaration. Remove the link by hand, or declare another path',
    );
    this.path = path;
    this.link = via?.link;
    this.target = via?.target;
  }
}

/**
 * A declared path passes through a symbolic link that someone other than root (or the host's
 * own user) could have put there: a link owned by another user, or any link in a directory
 * another user owns. The host runs as root; following such a link would let that user point a declared file at a place
 * only root may write (the same rule as systemd's "unsafe path transition" and the kernel's
 * protected_symlinks).
 */
export class UnsafeLink extends ApplyFailed {
  /** The declared path being resolved. */
  readonly path: string;
  /** The real path of the link. */
  readonly link: string;
  constructor(path: string, link: string, owner: { directory: string; uid: number } | { uid: number }) {
    const whose = 'directory' in owner ? `it is in ${owner.directory}, which belongs to uid ${owner.uid}` : `it belongs to uid ${owner.uid}`;
    super(
      `${path} passes through the symbolic link ${link}, and ${whose}; the host follows only links that root (or the host's own user) made in its own directories. ` +
        'Declare the path the link leads to instead, or replace the link with a directory',
    );
    this.path = path;
    this.link = link;
  }
}

/** Where a declared path is resolved: the machine's root, the host's state directory, the pass's memo. */
export type PathContext = Pick<ApplyContext, 'root' | 'stateDir'> & Partial<Pick<ApplyContext, 'pass'>>;

/**
 * Resolves a declared absolute path to the real path under the root that the host may act on.
 * Every directory on the way is checked: a symbolic link is followed only when where it leads
 * is inside the root ({@link PathEscapesRoot} otherwise); a regular file where a directory is
 * needed, or a link to nothing, is an ApplyFailed. Components that do not exist yet are kept as
 * written (the caller creates them). The last component is not followed. Whatever the root,
 * the real path must not be the host's state directory or lie under it
 * ({@link PathInStateDirectory}): the lexical check of hostOwnPath cannot see a link that
 * leads there. Everything the host writes, chmods, chowns or removes is resolved here.
 */
export async function resolveUnderRoot(ctx: PathContext, path: string): Promise<string> {
  return resolveUnderRootSync(ctx, path);
}

/** {@link resolveUnderRoot}, for callers that are themselves synchronous. */
export function resolveUnderRootSync(ctx: PathContext, path: string): string {
  const directories = ctx.pass?.directories;
  const { real, via } = walkUnderRoot(ctx.root, path, directories);
  const stateDir = realStateDirOf(ctx.stateDir);
  if (!isInside(stateDir, real)) return real;
  // A remembered parent does not say which link led there: walked again, for the message.
  const named = directories === undefined ? via : walkUnderRoot(ctx.root, path, undefined).via;
  throw new PathInStateDirectory(path, ctx.stateDir, named);
}

/**
 * Resolves a path under the root as {@link resolveUnderRoot} does, without the state-directory
 * check, for reading the machine's own files (its account databases) and nothing else.
 */
export function resolveToReadUnderRoot(root: string, path: string): string {
  return walkUnderRoot(root, path, undefined).real;
}

/** A symbolic link followed on the way to a declared path. */
interface FollowedLink {
  link: string;
  target: string;
}

// Links are followed when they stay inside the root rather than refused outright: a machine's
// own layout has them (/var/run -> /run, /lib -> usr/lib on a merged /usr), and a declaration
// of /var/run/app.pid means the file the machine reads there. Where a link leads is what is
// checked, against the root and the state directory alike.
function walkUnderRoot(root: string, path: string, directories: Map<string, string> | undefined): { real: string; via?: FollowedLink } {
  if (!path.startsWith('/') || path.includes('\0') || path.split('/').includes('..')) {
    throw new ApplyFailed(`${JSON.stringify(path)} is not a normalized absolute path; declare the path as "/dir/name"`);
  }
  const realRoot = realRootOf(root);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  const leaf = segments.pop();
  if (leaf === undefined) return { real: realRoot };
  const parent = `${root}\0/${segments.join('/')}`;
  const known = directories?.get(parent);
  if (known !== undefined) return { real: join(known, leaf) };
  let current = realRoot;
  let currentOwner = ownerOfRoot(realRoot);
  let anyoneElses = false;
  let via: FollowedLink | undefined;
  for (const [index, segment] of segments.entries()) {
    const candidate = join(current, segment);
    const declared = `/${segments.slice(0, index + 1).join('/')}`;
    const stats = lookAt(candidate, path);
    if (stats === undefined) return { real: join(candidate, ...segments.slice(index + 1), leaf), ...(via === undefined ? {} : { via }) };
    if (stats.isSymbolicLink()) {
      if (!trusted(currentOwner) || !trusted(stats.uid)) throw new UnsafeLink(path, candidate, trusted(currentOwner) ? { uid: stats.uid } : { directory: current, uid: currentOwner });
      current = followInsideRoot(candidate, declared, path, realRoot, root);
      currentOwner = statSync(current).uid;
      via = { link: candidate, target: current };
    } else if (stats.isDirectory()) {
      current = candidate;
      currentOwner = stats.uid;
    } else {
      throw new ApplyFailed(`${declared} is not a directory, so ${path} cannot be made under it; remove ${declared} by hand or declare another path`);
    }
    if (!trusted(currentOwner)) anyoneElses = true;
  }
  // Every directory on the way exists and was checked: the pass may reuse where they lead,
  // unless one of them is someone else's, who could swap what is inside it during the pass.
  if (!anyoneElses) directories?.set(parent, current);
  return { real: join(current, leaf), ...(via === undefined ? {} : { via }) };
}

/** True when `real` is `realRoot` or lies under it. */
export function isInside(realRoot: string, real: string): boolean {
  return realRoot === '/' || real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

/**
 * Why a file or directory at `path` is not the mesh's to declare, or undefined when it may be.
 * The host's state directory holds its store (a file written there would corrupt it), and the
 * host's own service definition belongs to the installation: a declaration that could rewrite
 * how the host starts could take the machine away from whoever installed the host.
 */
export function hostOwnPath(path: string, ctx: Pick<ApplyContext, 'root' | 'stateDir' | 'hostUnit'>): string | undefined {
  return ownPathRefusal(path, ctx, absolute);
}

// The real path of each root seen, by the root as given: a pass resolves thousands of paths
// under one root, and realpath(3) reads every component of it as a link each time. A root is
// the machine the host was started on; it does not move while the host runs.
const realRoots = new Map<string, string>();
const REAL_ROOTS_KEPT = 64;

// The root and the state directory as absolute paths, asked for several times for every file
// of every pass. Only a path that is absolute already is kept: what a relative one means
// follows the working directory.
const absolutes = new Map<string, string>();

function absolute(path: string): string {
  return path.startsWith('/') ? remembered(absolutes, path, resolve) : resolve(path);
}

/** What `compute` gives for `key`, computed once while `memo` holds at most REAL_ROOTS_KEPT. */
function remembered(memo: Map<string, string>, key: string, compute: (key: string) => string): string {
  const known = memo.get(key);
  if (known !== undefined) return known;
  const value = compute(key);
  if (memo.size >= REAL_ROOTS_KEPT) memo.clear();
  memo.set(key, value);
  return value;
}

// The state directory's real path, by the directory as given. It exists while a host applies
// (the store lock lives in it); one that does not exist yet is resolved as far as it does, and
// not remembered, since it may be made through a link later.
const realStateDirs = new Map<string, string>();

function realStateDirOf(stateDir: string): string {
  const known = realStateDirs.get(stateDir);
  if (known !== undefined) return known;
  const wanted = absolute(stateDir);
  const missing: string[] = [];
  for (let current = wanted; ; current = dirname(current)) {
    try {
      const real = join(realpathSync.native(current), ...missing);
      if (missing.length === 0) remembered(realStateDirs, stateDir, () => real);
      return real;
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT' || dirname(current) === current) return wanted;
      missing.unshift(basename(current));
    }
  }
}

// Who may have made a link the host follows: root, or the user the host runs as (a host run by
// hand on a folder), who could write wherever it leads anyway.
const OWN_UID = process.getuid?.() ?? 0;

function trusted(uid: number): boolean {
  return uid === 0 || uid === OWN_UID;
}

// The owner of each real root seen: the first directory of every walk.
const rootOwners = new Map<string, number>();

function ownerOfRoot(realRoot: string): number {
  const known = rootOwners.get(realRoot);
  if (known !== undefined) return known;
  const uid = statSync(realRoot).uid;
  if (rootOwners.size >= REAL_ROOTS_KEPT) rootOwners.clear();
  rootOwners.set(realRoot, uid);
  return uid;
}

function realRootOf(root: string): string {
  return remembered(realRoots, root, resolveRealRoot);
}

function resolveRealRoot(root: string): string {
  try {
    return realpathSync.native(root);
  } catch (error) {
    throw new ApplyFailed(`the root ${root} cannot be used: ${errorText(error)}; check --root`, { cause: error });
  }
}

function followInsideRoot(link: string, declared: string, path: string, realRoot: string, root: string): string {
  let target: string;
  try {
    target = realpathSync.native(link);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw new ApplyFailed(`cannot follow ${declared} on the way to ${path}: ${errorText(error)}`, { cause: error });
    const written = readlinkSync(link);
    const lexical = resolve(dirname(link), written);
    if (!isInside(realRoot, lexical)) throw new PathEscapesRoot(path, link, written, root);
    throw new ApplyFailed(`${declared} is a symbolic link to ${written}, which does not exist, so ${path} cannot be made under it; fix or remove the link by hand`);
  }
  if (!isInside(realRoot, target)) throw new PathEscapesRoot(path, link, target, root);
  const stats = statSync(target);
  if (!stats.isDirectory()) {
    throw new ApplyFailed(`${declared} leads to ${target}, which is not a directory, so ${path} cannot be made under it; remove ${declared} by hand or declare another path`);
  }
  return target;
}

function lookAt(real: string, path: string): Stats | undefined {
  try {
    return lstatOrAbsentSync(real);
  } catch (error) {
    throw new ApplyFailed(`cannot look at ${real} on the way to ${path}: ${errorText(error)}`, { cause: error });
  }
}

/** lstat, with a path that does not exist as undefined rather than an error. */
export async function lstatOrAbsent(real: string): Promise<Stats | undefined> {
  return lstatOrAbsentSync(real);
}

/** {@link lstatOrAbsent}, synchronous. */
export function lstatOrAbsentSync(real: string): Stats | undefined {
  const stats = lstatSync(real, { throwIfNoEntry: false });
  return stats ?? undefined;
}

/** What kind of thing is at a path, for a sentence: "a directory", "a symbolic link". */
export function kindOf(stats: Stats): string {
  if (stats.isFile()) return 'a file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isSocket()) return 'a socket';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isCharacterDevice()) return 'a character device';
  return 'something unrecognised';
}

/** The errno code of a Node system error (`ENOENT`), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/** An error's message, whatever was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
