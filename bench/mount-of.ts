import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The file system a directory is on, as /proc/self/mountinfo has it. */
export interface MountOf {
  mountPoint: string;
  type: string;
  source: string;
  /** For ext4: whether it has a journal (jbd2 lists it); undefined for other types. */
  journal?: boolean;
}

/**
 * Finds the mount holding `dir`: the longest mount point that is `dir` or a parent of it.
 * Mount points with spaces are escaped in mountinfo (`\040`) and unescaped here.
 */
export function mountOf(dir: string, mountinfo = readFileSync('/proc/self/mountinfo', 'utf8'), jbd2Dir = '/proc/fs/jbd2'): MountOf | undefined {
  const target = path.resolve(dir);
  let best: MountOf | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const mountPoint = unescape(left.split(' ')[4] ?? '');
    const [type, source] = right.split(' ');
    if (type === undefined || source === undefined || mountPoint === '') continue;
    const holds = target === mountPoint || target.startsWith(mountPoint === '/' ? '/' : `${mountPoint}/`);
    if (holds && (best === undefined || mountPoint.length >= best.mountPoint.length)) best = { mountPoint, type, source: unescape(source) };
  }
  if (best?.type === 'ext4') best.journal = hasJournal(best.source, jbd2Dir);
  return best;
}

/** How the results file and the table say it: `ext4 on /dev/vda at /, no journal`. */
export function describeMount(dir: string, mount = mountOf(dir)): string {
  if (mount === undefined) return `${dir}: file system unknown`;
  const journal = mount.journal === undefined ? '' : mount.journal ? ', with a journal' : ', no journal';
  return `${dir} is ${mount.type} on ${mount.source} at ${mount.mountPoint}${journal}`;
}

// jbd2 names a journal `<device>-<inode of the journal>`, e.g. `vda-8` or `dm-0-8`.
function hasJournal(source: string, jbd2Dir: string): boolean {
  const device = path.basename(source);
  try {
    return readdirSync(jbd2Dir).some((name) => name.startsWith(`${device}-`));
  } catch {
    return false; // no jbd2 directory: no journal on any device
  }
}

function unescape(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
