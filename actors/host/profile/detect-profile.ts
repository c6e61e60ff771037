import { hostname as osHostname, release } from 'node:os';
import { join, resolve } from 'node:path';
import { open, readdir, readFile, stat } from '../../shared/fs/promised-fs';
import type { Profile } from '../../../schema/profile';
import type { CommandRunner } from '../../shared/process/command-runner';
import { entryKind, isPresent, type EntryKind } from './entry-kind';
import { machineArch } from './machine-arch';
import { parseBuildProp, parseOsRelease } from './os-release';

/**
 * The facts about the running machine that are not files under the root: they come from the
 * kernel and Node. Tests pin them; the host leaves them out and the process's own are used.
 */
export interface HostEnvironment {
  /** Node's `process.arch` (`x64`, `arm64`, …), mapped to the kernel's word in the profile. */
  arch: string;
  /** The kernel release, as `uname -r` prints it. */
  kernel: string;
  /** The host name to report when `<root>/etc/hostname` says none. */
  hostname: string;
}

/** What {@link detectProfile} reads from. */
export interface ProfileOptions {
  /** The machine's root; `/` unless told. Every file the profile is read from is under it. */
  root?: string;
  /**
   * Accepted so the profile and the inventory are asked alike. The profile is read from files
   * only, so it answers at once, on a machine whose tools are broken, and the same under a
   * test root as on the machine.
   */
  runner?: CommandRunner;
  /** Overrides for the facts that do not come from files; see {@link HostEnvironment}. */
  env?: Partial<HostEnvironment>;
}

/**
 * What this machine can do, read from the files under `root`: the controller's input when it
 * decides what the machine should be given. Never throws for a machine that is odd or partly
 * unreadable: what cannot be told is `unknown` (the os, the init) or `none`, and the result
 * always satisfies the Profile contract.
 */
export async function detectProfile(options: ProfileOptions = {}): Promise<Profile> {
  const root = resolve(options.root ?? '/');
  const env: HostEnvironment = {
    arch: options.env?.arch ?? process.arch,
    kernel: options.env?.kernel ?? release(),
    hostname: options.env?.hostname ?? osHostname(),
  };
  const osRelease = await readOsRelease(root);
  const kernel = kernelRelease(env.kernel);
  const [os, init, packageManager, containerRuntime, graphicalSession, hostKind, hostname, wireguard] = await Promise.all([
    describeOs(root, osRelease),
    detectInit(root),
    detectPackageManager(root, osRelease),
    detectContainerRuntime(root),
    hasGraphicalSession(root),
    detectHostKind(root),
    detectHostname(root, env.hostname),
    detectWireGuard(root, kernel),
  ]);
  return {
    os,
    arch: machineArch(env.arch),
    kernel,
    init,
    package_manager: packageManager,
    container_runtime: containerRuntime,
    graphical_session: graphicalSession,
    wireguard,
    host_kind: hostKind,
    hostname,
  };
}

const OS_ID = /^[a-z0-9._-]{1,64}$/;

// os-release(5): /etc/os-release wins, /usr/lib/os-release is the vendor's copy it may link to.
async function readOsRelease(root: string): Promise<Map<string, string> | undefined> {
  for (const path of ['etc/os-release', 'usr/lib/os-release']) {
    const text = await readText(join(root, path));
    if (text !== undefined) return parseOsRelease(text);
  }
  return undefined;
}

async function describeOs(root: string, osRelease: Map<string, string> | undefined): Promise<Profile['os']> {
  if (osRelease !== undefined) {
    const id = osRelease.get('ID')?.trim() ?? '';
    return withOptional(OS_ID.test(id) ? id : 'unknown', osRelease.get('VERSION_ID'), osRelease.get('PRETTY_NAME'));
  }
  // Android has no os-release; its build properties say which release it is.
  const buildProp = await readText(join(root, 'system/build.prop'));
  if (buildProp !== undefined) {
    const version = parseBuildProp(buildProp).get('ro.build.version.release');
    return withOptional('android', version, version === undefined || version === '' ? 'Android' : `Android ${version}`);
  }
  return { id: 'unknown' };
}

function withOptional(id: string, versionId: string | undefined, prettyName: string | undefined): Profile['os'] {
  const version = versionId?.trim() ?? '';
  const pretty = stripControl(prettyName ?? '').trim().slice(0, 256);
  return {
    id,
    ...(version !== '' && version.length <= 64 ? { version_id: version } : {}),
    ...(pretty !== '' ? { pretty_name: pretty } : {}),
  };
}

function kernelRelease(text: string): string {
  const cleaned = stripControl(text).trim().slice(0, 256);
  return cleaned === '' ? 'unknown' : cleaned;
}

// A booted systemd creates /run/systemd/system (sd_booted(3) checks exactly this); an
// installed-but-not-running systemd does not, so a container of a systemd distribution is
// `none`. OpenRC leaves /run/openrc once booted; /sbin/openrc is the binary, present on a
// machine whose /run is not mounted (a root being prepared). Only when a look itself failed is
// the answer `unknown` rather than `none`.
async function detectInit(root: string): Promise<Profile['init']> {
  const systemd = await entryKind(join(root, 'run/systemd/system'));
  if (systemd === 'directory') return 'systemd';
  const openrc = await Promise.all([entryKind(join(root, 'run/openrc')), entryKind(join(root, 'sbin/openrc'))]);
  if (openrc.some((kind) => found(kind))) return 'openrc';
  return [systemd, ...openrc].includes('unreadable') ? 'unknown' : 'none';
}

interface ManagerEvidence {
  manager: Exclude<Profile['package_manager'], 'none'>;
  /** The package database: present where the manager actually manages the machine. */
  database: string;
  /** The program alone: weaker, a machine may carry another distribution's tool. */
  programs: string[];
  /** os-release ID / ID_LIKE words of the distributions this manager is native to. */
  families: string[];
}

// The order is apk, pacman, apt, and it only breaks ties that os-release could not. Each tool is
// packaged as a guest elsewhere — Debian ships pacman (with an empty /var/lib/pacman), Arch and
// Alpine ship dpkg — so the evidence is the package database rather than the program or its
// bare directory, and when two databases exist the distribution's own family decides. A dpkg
// status file is the likeliest guest, so apt comes last.
const MANAGERS: readonly ManagerEvidence[] = [
  { manager: 'apk', database: 'lib/apk/db', programs: ['sbin/apk'], families: ['alpine', 'postmarketos'] },
  { manager: 'pacman', database: 'var/lib/pacman/local', programs: ['usr/bin/pacman'], families: ['arch', 'archarm', 'manjaro', 'endeavouros'] },
  { manager: 'apt', database: 'var/lib/dpkg/status', programs: ['usr/bin/apt-get'], families: ['debian', 'ubuntu'] },
];

async function detectPackageManager(root: string, osRelease: Map<string, string> | undefined): Promise<Profile['package_manager']> {
  const family = new Set(`${osRelease?.get('ID') ?? ''} ${osRelease?.get('ID_LIKE') ?? ''}`.toLowerCase().split(/\s+/));
  const byDatabase = await filterAsync(MANAGERS, (evidence) => isPresent(join(root, evidence.database)));
  const candidates = byDatabase.length > 0
    ? byDatabase
    : await filterAsync(MANAGERS, async (evidence) => (await Promise.all(evidence.programs.map((path) => isExecutable(join(root, path))))).some(Boolean));
  const native = candidates.find((evidence) => evidence.families.some((word) => family.has(word)));
  return (native ?? candidates[0])?.manager ?? 'none';
}

const PROGRAM_DIRECTORIES = ['usr/bin', 'usr/local/bin'];

// Docker first: it is the one with a daemon the mesh talks to by that name. Fedora's and
// Debian's podman-docker install a `docker` script that runs podman; that machine runs podman.
async function detectContainerRuntime(root: string): Promise<Profile['container_runtime']> {
  const docker = await firstExecutable(root, 'docker');
  const podman = await firstExecutable(root, 'podman');
  if (docker !== undefined) {
    if (podman !== undefined && (await isPodmanShim(docker))) return 'podman';
    return 'docker';
  }
  return podman === undefined ? 'none' : 'podman';
}

async function firstExecutable(root: string, program: string): Promise<string | undefined> {
  for (const directory of PROGRAM_DIRECTORIES) {
    const path = join(root, directory, program);
    if (await isExecutable(path)) return path;
  }
  return undefined;
}

// Only the head is read: the real docker is a binary of tens of megabytes.
async function isPodmanShim(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(4096);
      const head = buffer.subarray(0, await handle.read(buffer, 0)).toString('utf8');
      return head.startsWith('#!') && head.includes('podman');
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

// A session leaves a socket: X servers in /tmp/.X11-unix (X0, X1, …), Wayland compositors in
// the user's runtime directory. A machine at its login screen has the greeter's; a machine
// whose display manager is enabled but not yet up (the host starts early at boot) is found by
// the enablement link systemd and OpenRC distributions make for it.
async function hasGraphicalSession(root: string): Promise<boolean> {
  const x11 = await listDirectory(join(root, 'tmp/.X11-unix'));
  for (const name of x11) {
    if (/^X\d+$/.test(name) && (await entryKind(join(root, 'tmp/.X11-unix', name))) === 'socket') return true;
  }
  for (const user of await listDirectory(join(root, 'run/user'))) {
    for (const name of await listDirectory(join(root, 'run/user', user))) {
      if (/^wayland-\d+$/.test(name) && (await entryKind(join(root, 'run/user', user, name))) === 'socket') return true;
    }
  }
  const managers = await Promise.all([
    isPresent(join(root, 'etc/systemd/system/display-manager.service')),
    isPresent(join(root, 'etc/runlevels/default/display-manager')),
  ]);
  return managers.some(Boolean);
}

// Android keeps its build properties in /system/build.prop; nothing else does. A phone sleeps
// and is killed at will, so it is an episodic host.
async function detectHostKind(root: string): Promise<Profile['host_kind']> {
  return (await entryKind(join(root, 'system/build.prop'))) === 'file' ? 'episodic' : 'resident';
}

const WIREGUARD_GO_DIRECTORIES = ['usr/bin', 'usr/local/bin', 'usr/sbin', 'bin'];

// The kernel has WireGuard when the module is loaded (/sys/module/wireguard), built in
// (modules.builtin) or installed for the running kernel (modules.dep: `ip link add type
// wireguard` loads it). Otherwise wg-quick falls back to the userspace wireguard-go, if present.
async function detectWireGuard(root: string, kernel: string): Promise<Profile['wireguard']> {
  if ((await entryKind(join(root, 'sys/module/wireguard'))) === 'directory') return 'kernel';
  if (/^[A-Za-z0-9._+-]{1,200}$/.test(kernel)) {
    for (const list of ['modules.builtin', 'modules.dep']) {
      const text = await readText(join(root, 'lib/modules', kernel, list));
      if (text !== undefined && /(^|\/)wireguard\.ko(\.[a-z]+)?:?(\s|$)/m.test(text)) return 'kernel';
    }
  }
  for (const directory of WIREGUARD_GO_DIRECTORIES) {
    if (await isExecutable(join(root, directory, 'wireguard-go'))) return 'wireguard-go';
  }
  return 'none';
}

const HOSTNAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})$/;

// hostname(5): the first line that is not a comment. A name the contract cannot carry (empty,
// "(none)") falls back to the kernel's, and to "localhost" when that is no better.
async function detectHostname(root: string, fallback: string): Promise<string> {
  const text = await readText(join(root, 'etc/hostname'));
  const written = text?.split('\n').map((line) => line.trim()).find((line) => line !== '' && !line.startsWith('#'));
  for (const candidate of [written, fallback.trim()]) {
    if (candidate !== undefined && HOSTNAME.test(candidate)) return candidate;
  }
  return 'localhost';
}

function found(kind: EntryKind): boolean {
  return kind !== 'missing' && kind !== 'unreadable';
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const stats = await stat(path);
    return stats.isFile() && (stats.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function listDirectory(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch {
    return [];
  }
}

async function filterAsync<T>(items: readonly T[], predicate: (item: T) => Promise<boolean>): Promise<T[]> {
  const verdicts = await Promise.all(items.map(predicate));
  return items.filter((_, index) => verdicts[index]);
}

function stripControl(text: string): string {
  return [...text].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f).join('');
}
