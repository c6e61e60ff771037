import type { Stats } from 'node:fs';
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { ApplyContext } from './applier';
import { ApplyFailed } from './applier';
import { namesHostUnitFile } from './service/host-unit';

// Where a declared path lands on this machine. Under a root other than `/` (a test root, an
// image being prepared) a symbolic link inside the root may point anywhere on the real machine;
// following it would have the host write outside the machine it was told to manage, so a link
// that leads out is refused, never followed. The last component is never followed: the
// appliers look at it with lstat and refuse what is not theirs to replace.
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
 * Resolves a declared absolute path to the real path under `root` that the host may act on.
 * Every directory on the way is checked: a symbolic link is followed only when where it leads
 * is inside the root ({@link PathEscapesRoot} otherwise); a regular file where a directory is
 * needed, or a link to nothing, is an ApplyFailed. Components that do not exist yet are kept as
 * written (the caller creates them). The last component is not followed. With root `/` the
 * machine is the real one, nothing can lead outside it, and the path is returned unchanged.
 */
export async function resolveUnderRoot(root: string, path: string): Promise<string> {
  return resolveUnderRootSync(root, path);
}

/** {@link resolveUnderRoot}, for callers that are themselves synchronous. */
export function resolveUnderRootSync(root: string, path: string, directories?: Map<string, string>): string {
  if (!path.startsWith('/') || path.includes('\0') || path.split('/').includes('..')) {
    throw new ApplyFailed(`${JSON.stringify(path)} is not a normalized absolute path; declare the path as "/dir/name"`);
  }
  if (absolute(root) === '/') return path;
  const realRoot = realRootOf(root);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  const leaf = segments.pop();
  if (leaf === undefined) return realRoot;
  const parent = `${root}\0/${segments.join('/')}`;
  const known = directories?.get(parent);
  if (known !== undefined) return join(known, leaf);
  let current = realRoot;
  for (const [index, segment] of segments.entries()) {
    const candidate = join(current, segment);
    const declared = `/${segments.slice(0, index + 1).join('/')}`;
    const stats = lookAt(candidate, path);
    if (stats === undefined) return join(candidate, ...segments.slice(index + 1), leaf);
    if (stats.isSymbolicLink()) {
      current = followInsideRoot(candidate, declared, path, realRoot, root);
    } else if (stats.isDirectory()) {
      current = candidate;
    } else {
      throw new ApplyFailed(`${declared} is not a directory, so ${path} cannot be made under it; remove ${declared} by hand or declare another path`);
    }
  }
  // Every directory on the way exists and was checked: the pass may reuse where they lead.
  directories?.set(parent, current);
  return join(current, leaf);
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
  const onMachine = join(absolute(ctx.root), path);
  const stateDir = absolute(ctx.stateDir);
  if (onMachine === stateDir || onMachine.startsWith(stateDir + sep)) {
    return `${path} is in the host's state directory (${ctx.stateDir}); the host's store is not a resource. Declare another path`;
  }
  if (namesHostUnitFile(path, ctx.hostUnit)) {
    return `${path} defines how the host itself runs (${ctx.hostUnit}); that belongs to the installation, not to a declaration. Remove it from the module`;
  }
  return undefined;
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
