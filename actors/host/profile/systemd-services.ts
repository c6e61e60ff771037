import type { Inventory } from '../../../schema/inventory';

/** One service as the inventory lists it. */
export type InventoryService = Inventory['services'][number];

// The unit-file states that mean started at boot or by another unit; the same reading as the
// systemd service backend's `is-enabled`, so adoption and the inventory agree on a machine.
const STARTED_AT_BOOT = new Set(['enabled', 'enabled-runtime', 'static', 'indirect', 'generated', 'transient']);

/**
 * Merges systemd's two listings of services into the inventory's: unit files
 * (`systemctl list-unit-files --type=service --no-legend`: UNIT FILE, STATE, PRESET) say
 * whether each is enabled; loaded units (`systemctl list-units --type=service --all
 * --no-legend`: UNIT, LOAD, ACTIVE, SUB, DESCRIPTION) say whether it runs. A unit file that is
 * not loaded is stopped. Names drop `.service`, as declarations spell them (`nginx`,
 * `getty@tty1`).
 *
 * Left out: templates (`getty@.service`, which cannot run themselves), aliases (another name
 * for a unit already listed) and units that are referenced but have no file (`not-found`).
 * An instance with no unit-file line of its own is enabled when its template is.
 */
export function parseSystemdServices(unitFiles: string, units: string): InventoryService[] {
  const fileStates = new Map<string, string>();
  for (const columns of rows(unitFiles)) {
    const [unit, state] = columns;
    if (unit === undefined || state === undefined || !unit.endsWith('.service')) continue;
    fileStates.set(unit, state);
  }
  const active = new Map<string, string>();
  for (const columns of rows(units)) {
    const [unit, load, activeState] = columns;
    if (unit === undefined || load === undefined || activeState === undefined || !unit.endsWith('.service')) continue;
    if (load === 'not-found' && !fileStates.has(unit)) continue;
    active.set(unit, activeState);
  }
  const names = new Set([...fileStates.keys(), ...active.keys()]);
  const services: InventoryService[] = [];
  for (const unit of [...names].sort()) {
    const fileState = fileStates.get(unit) ?? fileStates.get(templateOf(unit) ?? '');
    if (isTemplate(unit) || fileStates.get(unit) === 'alias') continue;
    services.push({
      name: unit.slice(0, -'.service'.length),
      state: runningState(active.get(unit)),
      enabled: fileState !== undefined && STARTED_AT_BOOT.has(fileState),
    });
  }
  return services;
}

// `--no-legend` drops the header and footer; a failed or missing unit may still be marked
// with a leading circle (● in UTF-8, * in the C locale) that is not a column.
function rows(text: string): string[][] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/).filter((word) => word !== ''))
    .map((words) => (words[0] === '●' || words[0] === '*' ? words.slice(1) : words))
    .filter((words) => words.length > 0);
}

function runningState(activeState: string | undefined): InventoryService['state'] {
  switch (activeState) {
    case undefined:
    case 'inactive':
    case 'deactivating':
      return 'stopped';
    case 'active':
    case 'reloading':
    case 'refreshing':
      return 'running';
    case 'failed':
      return 'failed';
    default:
      // activating (a restart pending), maintenance: neither up nor down yet.
      return 'unknown';
  }
}

function isTemplate(unit: string): boolean {
  return unit.endsWith('@.service');
}

function templateOf(unit: string): string | undefined {
  const at = unit.indexOf('@');
  return at < 0 || isTemplate(unit) ? undefined : `${unit.slice(0, at)}@.service`;
}
