import { join, resolve } from 'node:path';
import { readFile } from '../../shared/fs/promised-fs';
import type { Inventory } from '../../../schema/inventory';
import type { Profile } from '../../../schema/profile';
import { parseApkInstalled } from '../appliers/package/apk-installed-database';
import { describeFailure, succeeded, type CommandRunner, type RunResult } from '../../shared/process/command-runner';
import { parseContainerList, type InventoryContainer } from './container-list';
import { parseDpkgStatus } from './dpkg-status';
import { interfaceAddresses, type InterfaceTable } from './interface-addresses';
import { inventoryWord } from './inventory-word';
import { parseRcStatus } from './openrc-services';
import { readPacmanLocal } from './pacman-local';
import { parseSystemdServices, type InventoryService } from './systemd-services';
import { utcTimestamp } from '../../shared/time/utc-timestamp';

/** The bound on each list unless told: enough for any real machine, small enough to send. */
export const DEFAULT_INVENTORY_LIMIT = 5000;

/** What {@link detectInventory} reads from. */
export interface InventoryOptions {
  /** The machine's root; `/` unless told. Package databases are read under it. */
  root?: string;
  /** Runs the service managers and container engines. */
  runner: CommandRunner;
  /** Which package manager, init and container runtime to ask (from {@link detectProfile}). */
  profile: Pick<Profile, 'package_manager' | 'init' | 'container_runtime'>;
  /** At most this many packages, services and containers each; `truncated` says when cut. */
  limit?: number;
  /** How long one listing command may take. */
  timeoutMs?: number;
  /** The clock for `collected_at`. */
  now?: () => Date;
  /** The machine's interfaces; the running kernel's unless given. */
  interfaces?: InterfaceTable;
}

/** A part of the inventory that could not be listed, and why, in words a person can act on. */
export interface InventoryGap {
  section: 'packages' | 'services' | 'containers';
  reason: string;
}

/** The inventory and what is missing from it. */
export interface CollectedInventory {
  inventory: Inventory;
  /** Empty when every section was listed. A gap's section is empty in `inventory`. */
  gaps: InventoryGap[];
}

type Packages = Inventory['packages'];

const DEFAULT_TIMEOUT_MS = 30_000;
// Each listing is kept whole up to this size; the runner's default would cut a busy machine's.
const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;
// The tools' words are read, so they are asked to speak the C locale.
const ENVIRONMENT = { LC_ALL: 'C', SYSTEMD_COLORS: '0', EINFO_COLOR: 'NO' };

/**
 * What the machine already has: installed packages (read from the package database under
 * `root`, no process started), services (from the running init) and containers (from the
 * engine). A section whose source fails is left empty and its gap says why; nothing here
 * throws for a machine that is odd or broken, so enrolment always has an inventory to send.
 *
 * Services and containers are asked of the running init and engine, which answer for the
 * booted machine only: under any root but `/` those sections are empty and a gap says so,
 * rather than describing the wrong machine.
 */
export async function collectInventory(options: InventoryOptions): Promise<CollectedInventory> {
  const root = resolve(options.root ?? '/');
  const limit = options.limit ?? DEFAULT_INVENTORY_LIMIT;
  const ask = (argv: string[]): Promise<RunResult> =>
    options.runner.run(argv, { env: ENVIRONMENT, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxOutputBytes: MAX_OUTPUT_BYTES });
  const gaps: InventoryGap[] = [];
  const [packages, services, containers] = await Promise.all([
    listPackages(root, options.profile.package_manager, gaps),
    listServices(root, options.profile.init, ask, gaps),
    listContainers(root, options.profile.container_runtime, ask, gaps),
  ]);
  const truncated = packages.length > limit || services.length > limit || containers.length > limit;
  const now = (options.now ?? (() => new Date()))();
  const inventory: Inventory = {
    packages: packages.slice(0, limit),
    services: services.slice(0, limit),
    containers: containers.slice(0, limit),
    addresses: interfaceAddresses(options.interfaces),
    collected_at: isoSeconds(now),
    ...(truncated ? { truncated: true } : {}),
  };
  gaps.sort((a, b) => SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section));
  return { inventory, gaps };
}

/** {@link collectInventory} without the gaps: the Inventory contract alone, as sent upward. */
export async function detectInventory(options: InventoryOptions): Promise<Inventory> {
  return (await collectInventory(options)).inventory;
}

const SECTIONS: readonly InventoryGap['section'][] = ['packages', 'services', 'containers'];

async function listPackages(root: string, manager: Profile['package_manager'], gaps: InventoryGap[]): Promise<Packages> {
  const gap = (reason: string): Packages => {
    gaps.push({ section: 'packages', reason });
    return [];
  };
  switch (manager) {
    case 'apt': {
      const path = join(root, 'var/lib/dpkg/status');
      const text = await readDatabase(path);
      if (typeof text !== 'string') return gap(`the dpkg database ${path} could not be read: ${text.reason}`);
      return words(parseDpkgStatus(text));
    }
    case 'apk': {
      const path = join(root, 'lib/apk/db/installed');
      const text = await readDatabase(path);
      if (typeof text !== 'string') return gap(`the apk database ${path} could not be read: ${text.reason}`);
      return words([...parseApkInstalled(text)].map(([name, version]) => ({ name, version })));
    }
    case 'pacman': {
      const path = join(root, 'var/lib/pacman/local');
      let read: Awaited<ReturnType<typeof readPacmanLocal>>;
      try {
        read = await readPacmanLocal(path);
      } catch (error) {
        return gap(`the pacman database ${path} could not be read: ${reasonOf(error)}`);
      }
      if (read.unreadable.length > 0) {
        const shown = read.unreadable.slice(0, 3).join(', ');
        const more = read.unreadable.length > 3 ? ` and ${read.unreadable.length - 3} more` : '';
        gaps.push({ section: 'packages', reason: `${read.unreadable.length} entries of ${path} have no readable desc and are not listed: ${shown}${more}` });
      }
      return words(read.packages);
    }
    case 'none':
      return [];
  }
}

async function listServices(
  root: string,
  init: Profile['init'],
  ask: (argv: string[]) => Promise<RunResult>,
  gaps: InventoryGap[],
): Promise<InventoryService[]> {
  const gap = (reason: string): InventoryService[] => {
    gaps.push({ section: 'services', reason });
    return [];
  };
  if (init === 'none') return [];
  if (init === 'unknown') return gap('the init could not be told (its files under the root were unreadable), so no service manager was asked');
  if (root !== '/') return gap(`${init} answers for the booted machine only, not for the root ${root}; run without --root to list services`);
  if (init === 'systemd') {
    const unitFiles = await ask(['systemctl', 'list-unit-files', '--type=service', '--no-legend', '--no-pager']);
    if (!succeeded(unitFiles)) return gap(describeFailure(unitFiles));
    const units = await ask(['systemctl', 'list-units', '--type=service', '--all', '--no-legend', '--no-pager', '--plain']);
    if (!succeeded(units)) return gap(describeFailure(units));
    return parseSystemdServices(unitFiles.stdout, units.stdout);
  }
  const status = await ask(['rc-status', '--all']);
  if (!succeeded(status)) return gap(describeFailure(status));
  return parseRcStatus(status.stdout);
}

async function listContainers(
  root: string,
  runtime: Profile['container_runtime'],
  ask: (argv: string[]) => Promise<RunResult>,
  gaps: InventoryGap[],
): Promise<InventoryContainer[]> {
  if (runtime === 'none') return [];
  if (root !== '/') {
    gaps.push({ section: 'containers', reason: `${runtime} answers for the booted machine only, not for the root ${root}; run without --root to list containers` });
    return [];
  }
  const argv = runtime === 'docker' ? ['docker', 'ps', '--all', '--format', '{{json .}}'] : ['podman', 'ps', '--all', '--format', 'json'];
  const result = await ask(argv);
  if (!succeeded(result)) {
    gaps.push({ section: 'containers', reason: describeFailure(result) });
    return [];
  }
  return parseContainerList(result.stdout);
}

function words(packages: Array<{ name: string; version: string }>): Packages {
  const listed: Packages = [];
  for (const pkg of packages) {
    const name = inventoryWord(pkg.name);
    const version = inventoryWord(pkg.version);
    if (name !== undefined && version !== undefined) listed.push({ name, version });
  }
  return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function readDatabase(path: string): Promise<string | { reason: string }> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    return { reason: reasonOf(error) };
  }
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'it does not exist (is the profile right about the package manager?)';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (run as root)';
  return error instanceof Error ? error.message : String(error);
}

// The contract's times carry whole seconds, as `2026-08-27T14:02:00Z`.
function isoSeconds(date: Date): string {
  return `${utcTimestamp(date).slice(0, 19)}Z`;
}
