import type { Stats } from 'node:fs';
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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
export type PathContext = Pick<ApplyContext, 'root' | 'stateDir'> & Partial<Pick<ApplyContext, 'pass' | 'fdDirectory' | 'raceWindow' | 'lookWindow'>>;

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
  return checkedUnderRoot(ctx, path).real;
}

function checkedUnderRoot(ctx: PathContext, path: string): Walked {
  const directories = ctx.pass?.directories;
  const walked = walkUnderRoot(ctx.root, path, directories, ctx.pass?.identities);
  const stateDir = realStateDirOf(ctx.stateDir);
  if (!isInside(stateDir, walked.real)) return walked;
  // A remembered parent does not say which link led there: walked again, for the message.
  const named = directories === undefined ? walked.via : walkUnderRoot(ctx.root, path, undefined, undefined).via;
  throw new PathInStateDirectory(path, ctx.stateDir, named);
}

/**
 * Resolves a path under the root as {@link resolveUnderRoot} does, without the state-directory
 * check, for reading the machine's own files (its account databases) and nothing else.
 */
export function resolveToReadUnderRoot(root: string, path: string): string {
  return walkUnderRoot(root, path, undefined, undefined).real;
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
function walkUnderRoot(root: string, path: string, directories: Map<string, string> | undefined, identities: Map<string, Identity> | undefined): Walked {
  if (!path.startsWith('/') || path.includes('\0') || path.split('/').includes('..')) {
    throw new ApplyFailed(`${JSON.stringify(path)} is not a normalized absolute path; declare the path as "/dir/name"`);
  }
  const realRoot = realRootOf(root);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  const leaf = segments.pop();
  const rootSeen = rootOf(realRoot);
  if (leaf === undefined) return { real: realRoot, realRoot, deepest: { real: realRoot, ...rootSeen } };
  const parent = `${root}\0/${segments.join('/')}`;
  const known = directories?.get(parent);
  const knownIdentity = known === undefined ? undefined : identities?.get(known);
  if (known !== undefined && (identities === undefined || knownIdentity !== undefined)) {
    return { real: childPath(known, leaf), realRoot, deepest: { real: known, ...(knownIdentity ?? identityOf(statSync(known))) }, remembered: true };
  }
  let current = realRoot;
  let currentOwner = rootSeen.uid;
  let deepest: Identity = rootSeen;
  let anyoneElses = false;
  let via: FollowedLink | undefined;
  for (const [index, segment] of segments.entries()) {
    const candidate = childPath(current, segment);
    const declared = `/${segments.slice(0, index + 1).join('/')}`;
    const stats = lookAt(candidate, path);
    if (stats === undefined) {
      return { real: join(candidate, ...segments.slice(index + 1), leaf), realRoot, deepest: { real: current, ...deepest }, ...(via === undefined ? {} : { via }) };
    }
    if (stats.isSymbolicLink()) {
      if (!trusted(currentOwner) || !trusted(stats.uid)) throw new UnsafeLink(path, candidate, trusted(currentOwner) ? { uid: stats.uid } : { directory: current, uid: currentOwner });
      current = followInsideRoot(candidate, declared, path, realRoot, root);
      const target = statSync(current);
      currentOwner = target.uid;
      deepest = identityOf(target);
      via = { link: candidate, target: current };
    } else if (stats.isDirectory()) {
      current = candidate;
      currentOwner = stats.uid;
      deepest = identityOf(stats);
    } else {
      throw new ApplyFailed(`${declared} is not a directory, so ${path} cannot be made under it; remove ${declared} by hand or declare another path`);
    }
    if (!trusted(currentOwner)) anyoneElses = true;
  }
  // Every directory on the way exists and was checked: the pass may reuse where they lead,
  // unless one of them is someone else's, who could swap what is inside it during the pass.
  if (!anyoneElses) {
    directories?.set(parent, current);
    identities?.set(current, deepest);
  }
  return { real: childPath(current, leaf), realRoot, deepest: { real: current, ...deepest }, ...(via === undefined ? {} : { via }) };
}

/**
 * `join(directory, name)` for a directory that is a real path already (absolute, normalized:
 * the real root, or a walk's step from it) and a name that is one segment of a declared path
 * (walkUnderRoot refuses `..` and drops empty and `.` segments). `join` normalizes the whole
 * string again at every call, and a pass of 1,000 files made some 10,000 of them: about 4 % of
 * an apply's user CPU (perf, 2026-12-07).
 */
export function childPath(directory: string, name: string): string {
  return directory.endsWith('/') ? directory + name : `${directory}/${name}`;
}

/** Which directory a walk checked: its device and inode, and its owner. */
export interface Identity {
  dev: number;
  ino: number;
  uid: number;
}

/** What a walk found: the real path, the real root, and the deepest directory on the way that exists. */
interface Walked {
  real: string;
  realRoot: string;
  deepest: Identity & { real: string };
  via?: FollowedLink;
  /** The parent came from the pass's memo, not from a walk just now. */
  remembered?: boolean;
}

function identityOf(stats: Stats): Identity {
  return { dev: stats.dev, ino: stats.ino, uid: stats.uid };
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

// The identity and owner of each real root seen: the first directory of every walk.
const rootIdentities = new Map<string, Identity>();

function rootOf(realRoot: string): Identity {
  const known = rootIdentities.get(realRoot);
  if (known !== undefined) return known;
  const identity = identityOf(statSync(realRoot));
  if (rootIdentities.size >= REAL_ROOTS_KEPT) rootIdentities.clear();
  rootIdentities.set(realRoot, identity);
  return identity;
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

// The look→write window. A path is checked by the walk above, and then written; a user who owns
// a directory on the way could swap a checked directory for a link in between, and a write by
// path would follow it out of the root. Node has no openat(2), but Linux names every open
// descriptor under /proc/self/fd, and a path through `/proc/self/fd/N/leaf` is resolved from the
// directory N holds, whatever its name now leads to. So the directories on the way are opened
// one by one from the root, each relative to the last and never following a link, the last one
// is compared with the one the walk checked, and every create, rename, chmod, chown and removal
// is done through it.

/**
 * A directory on the way to a declared path changed between the host's check and its write (a
 * link or another directory was put in its place). Nothing was written.
 */
export class PathChangedUnderfoot extends ApplyFailed {
  /** The declared path being written (or looked at). */
  readonly path: string;
  constructor(path: string, directory: string, how: string, looking = false) {
    super(
      looking
        ? `${path} was not read: ${directory} ${how} between the host's check and its look; what is there was not looked at. Find out who changes it, then apply again`
        : `${path} was not written: ${directory} ${how} between the host's check and its write; nothing was written there. Find out who changes it, then apply again`,
    );
    this.path = path;
  }
}

/**
 * The host cannot name an open directory (no /proc/self/fd: /proc is not mounted, or this is not
 * Linux), so it cannot write through the directory it checked. It refuses rather than write by
 * path, which a user owning a directory on the way could turn out of the root.
 */
export class NoDescriptorPaths extends ApplyFailed {
  constructor(fdDirectory: string, cause?: unknown) {
    super(`cannot write safely: ${fdDirectory} does not name this process's open directories, so the host cannot write through the directory it checked. Mount /proc (mount -t proc proc /proc) and apply again`, { cause });
  }
}

/** A directory under the root the host checked and holds open; everything in it is reached through it. */
export interface HeldDirectory {
  /** The open descriptor (closed by {@link HeldDirectory.close}). */
  readonly fd: number;
  /** The real path the directory had when checked: for messages and the sync barrier only. */
  readonly real: string;
  /** A path to `name` in the held directory, resolved from the descriptor, never from `real`. */
  at(name: string): string;
  /** The device and inode of the directory held (fixed for as long as the descriptor is open). */
  identity(): { dev: number; ino: number };
  /** Lets go of it: closed, or handed back to the pass that keeps it (HeldDirectories). */
  close(): void;
}

/** The parent of a declared path, held, with what was made on the way to it. */
export interface HeldParent {
  /** The held parent; undefined when it does not exist and was not to be made. */
  directory: HeldDirectory | undefined;
  /** The last component of the real path. */
  leaf: string;
  /** The real path, as {@link resolveUnderRoot} gives it. */
  real: string;
  /** Directories made on the way (real paths, outermost first), when asked to make them. */
  made: string[];
}

/** Directories made on the way to a declared path: the machine's usual default. */
const MADE_DIRECTORY_MODE = 0o755;
const OPEN_DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** How a parent is held: `make` the directories missing on the way; `look` only (observe), never to write. */
export interface HoldOptions {
  make: boolean;
  look?: boolean;
}

/**
 * Checks a declared path as {@link resolveUnderRoot} does, then opens the directories on the way
 * to its parent one by one from the root, each through the last and never following a link, and
 * checks that the parent reached is the very directory the walk checked. With `make`, missing
 * directories are made (0755 root, as `mkdir -p` by root would) and held the same way. The caller
 * writes through {@link HeldDirectory.at} and closes it.
 */
export function holdParentUnderRoot(ctx: PathContext, path: string, options: HoldOptions): HeldParent {
  const walked = checkedUnderRoot(ctx, path);
  try {
    return holdWalked(ctx, path, walked, options);
  } catch (error) {
    // Something earlier in the pass (an action) may have made a remembered directory again:
    // forgotten, and the path walked afresh, which a swap during that walk does not survive.
    if (!(error instanceof PathChangedUnderfoot) || walked.remembered !== true) throw error;
    for (const [key, real] of ctx.pass?.directories ?? []) if (real === walked.deepest.real) ctx.pass?.directories.delete(key);
    ctx.pass?.identities.delete(walked.deepest.real);
    return holdWalked(ctx, path, checkedUnderRoot(ctx, path), options);
  }
}

function holdWalked(ctx: PathContext, path: string, walked: Walked, options: HoldOptions): HeldParent {
  if (walked.real === walked.realRoot) throw new ApplyFailed(`${path} is the root itself, which has no parent to write in; declare a path under it`);
  if (options.look === true) ctx.lookWindow?.(walked.real);
  else ctx.raceWindow?.(walked.real);
  const looking = options.look === true;
  const fdDirectory = ctx.fdDirectory ?? '/proc/self/fd';
  const leaf = basename(walked.real);
  const made: string[] = [];
  // The parent held already this pass: the very directory the walk just checked, still named
  // where it was. Anything else (moved, swapped, a link in its place) opens the chain again.
  const kept = ctx.pass?.held;
  const parentReal = dirname(walked.real);
  // The walk found no parent, and none is to be made: nothing is there to hold, as when the
  // chain below meets the missing directory, without opening the way to it first.
  if (!options.make && walked.deepest.real !== parentReal) return { directory: undefined, leaf, real: walked.real, made };
  if (kept !== undefined && walked.deepest.real === parentReal) {
    const reused = kept.take(parentReal, walked.deepest, fdDirectory, walked.remembered === true);
    if (reused !== undefined) return { directory: heldAt(reused.fd, parentReal, fdDirectory, reused, reused.release), leaf, real: walked.real, made };
  }
  let fd = openDirectory(walked.realRoot, path, walked.realRoot, looking);
  let real = walked.realRoot;
  try {
    checkDescriptorPaths(fdDirectory, fd);
    // The root itself is where trust starts (opened by its real path), not something checked.
    const parent = dirname(walked.real);
    const components = parent === walked.realRoot ? [] : relative(walked.realRoot, parent).split(sep);
    for (const component of components) {
      const next = join(real, component);
      const through = `${fdDirectory}/${fd}/${component}`;
      let opened = tryOpenDirectory(through, path, next, looking);
      if (opened === undefined) {
        if (!options.make) {
          closeSync(fd);
          return { directory: undefined, leaf, real: walked.real, made };
        }
        const making = makeDirectory(through, path, next);
        if (making.made) made.push(next);
        opened = making.fd;
      }
      closeSync(fd);
      fd = opened;
      real = next;
      if (real === walked.deepest.real) sameAsChecked(fd, walked.deepest, path, real, looking);
    }
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (kept === undefined) return { directory: heldAt(fd, real, fdDirectory), leaf, real: walked.real, made };
  const identity = fstatSync(fd);
  const release = kept.keep(real, fd, identity);
  return { directory: heldAt(fd, real, fdDirectory, identity, release), leaf, real: walked.real, made };
}

/**
 * A held directory over `fd`. Closing it closes the descriptor, or, when the pass keeps it
 * (`release` given), hands it back to the pass, which closes it when the pass ends.
 */
function heldAt(fd: number, real: string, fdDirectory: string, known?: { dev: number; ino: number }, release?: () => void): HeldDirectory {
  let open = true;
  let identity = known === undefined ? undefined : { dev: known.dev, ino: known.ino };
  return {
    fd,
    real,
    at: (name) => `${fdDirectory}/${fd}/${name}`,
    identity: () => {
      if (identity === undefined) {
        const stats = fstatSync(fd);
        identity = { dev: stats.dev, ino: stats.ino };
      }
      return identity;
    },
    close: () => {
      if (open) {
        if (release === undefined) closeSync(fd);
        else release();
      }
      open = false;
    },
  };
}

// Checked once per process and directory of descriptors: /proc is mounted at start or not at all.
const descriptorPathsSeen = new Set<string>();

function checkDescriptorPaths(fdDirectory: string, fd: number): void {
  if (descriptorPathsSeen.has(fdDirectory)) return;
  let named: Stats;
  try {
    named = statSync(`${fdDirectory}/${fd}`);
  } catch (error) {
    throw new NoDescriptorPaths(fdDirectory, error);
  }
  const held = fstatSync(fd);
  if (named.dev !== held.dev || named.ino !== held.ino) throw new NoDescriptorPaths(fdDirectory);
  descriptorPathsSeen.add(fdDirectory);
}

function sameAsChecked(fd: number, checked: Identity, path: string, real: string, looking = false): void {
  const held = fstatSync(fd);
  if (held.dev !== checked.dev || held.ino !== checked.ino) throw new PathChangedUnderfoot(path, real, 'was replaced by another directory', looking);
}

function openDirectory(through: string, path: string, real: string, looking = false): number {
  const fd = tryOpenDirectory(through, path, real, looking);
  if (fd === undefined) throw new PathChangedUnderfoot(path, real, 'disappeared', looking);
  return fd;
}

function tryOpenDirectory(through: string, path: string, real: string, looking = false): number | undefined {
  try {
    return openSync(through, OPEN_DIRECTORY);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new PathChangedUnderfoot(path, real, 'became a symbolic link', looking);
    if (code === 'ENOTDIR') throw new PathChangedUnderfoot(path, real, 'is no longer a directory', looking);
    throw new ApplyFailed(`cannot open ${real} on the way to ${path}: ${errorText(error)}`, { cause: error });
  }
}

// Made closed, then given its owner and opened up: never reachable with the mode and the wrong
// owner. One that someone else made meanwhile is theirs, and is only held, never changed.
function makeDirectory(through: string, path: string, real: string): { fd: number; made: boolean } {
  let made = true;
  try {
    mkdirSync(through, { mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw new ApplyFailed(`cannot make ${real} on the way to ${path}: ${errorText(error)}`, { cause: error });
    made = false;
  }
  const fd = openDirectory(through, path, real);
  if (made) {
    fchownSync(fd, 0, 0);
    fchmodSync(fd, MADE_DIRECTORY_MODE);
  }
  return { fd, made };
}

/**
 * Holds a directory of the host's own (its state directory, where adoption keeps originals),
 * which no one else can write and so needs no walk, for the writers that take a held directory.
 */
export function holdOwnDirectory(real: string, fdDirectory = '/proc/self/fd'): HeldDirectory {
  const fd = openSync(real, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    checkDescriptorPaths(fdDirectory, fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return heldAt(fd, real, fdDirectory);
}
