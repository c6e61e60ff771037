import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { chartModel } from './chart-model';
import { machineToDot } from './machine-to-dot';
import { machineToMermaid } from './machine-to-mermaid';
import { renderSvg } from './render-svg';

/** One chart file, by its path relative to the repository root, and what it should hold. */
export interface ChartFile {
  path: string;
  content: string;
}

/** The charts drawn, and the machine files that could not be read or drawn. */
export interface ChartRun {
  files: ChartFile[];
  failures: Array<{ source: string; error: string }>;
}

/** Where charts are drawn from and to, relative to the repository root. */
export interface ChartPlaces {
  root: string;
  machinesDir?: string;
  outDir?: string;
  /** Only these machine files (relative to root); every `*.machine.ts` in `machinesDir` otherwise. */
  machineFiles?: string[];
}

/** The repository root of this checkout. */
export const REPOSITORY_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * Draws `<name>.mmd` and `<name>.svg` into `docs/charts/` for every machine exported by a
 * `*.machine.ts` file in machines/ (`<name>` is the file's name before `.machine.ts`; a file
 * exporting several machines gives `<name>.<machine id>`). Files are found, not listed, so a
 * new machine gets its chart without anyone remembering to add it.
 */
export async function drawCharts(places: ChartPlaces): Promise<ChartRun> {
  const machinesDir = places.machinesDir ?? 'machines';
  const outDir = places.outDir ?? join('docs', 'charts');
  const sources = places.machineFiles ?? findMachineFiles(join(places.root, machinesDir)).map((file) => join(machinesDir, file));
  const run: ChartRun = { files: [], failures: [] };
  for (const source of sources) {
    try {
      const machines = exportedMachines((await import(resolve(places.root, source))) as Record<string, unknown>);
      if (machines.length === 0) throw new Error('exports no state machine');
      const stem = basename(source).replace(/\.machine\.ts$/, '');
      for (const machine of machines) {
        const name = machines.length === 1 ? stem : `${stem}.${machine.id}`;
        const model = chartModel(machine);
        const sourcePath = relative(places.root, resolve(places.root, source)).split('\\').join('/');
        run.files.push({ path: join(outDir, `${name}.mmd`), content: machineToMermaid(model, sourcePath) });
        run.files.push({ path: join(outDir, `${name}.svg`), content: await renderSvg(machineToDot(model)) });
      }
    } catch (error) {
      run.failures.push({ source, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return run;
}

/** The `*.machine.ts` files in a folder (tests excluded), sorted. */
export function findMachineFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.machine.ts'))
    .sort();
}

/**
 * Compares drawn charts with the files in the repository: `missing` are not there, `stale`
 * differ, `extra` are charts in `outDir` that no machine draws any more.
 */
export function compareCharts(root: string, files: readonly ChartFile[], outDir = join('docs', 'charts')): {
  missing: string[];
  stale: string[];
  extra: string[];
} {
  const missing: string[] = [];
  const stale: string[] = [];
  for (const file of files) {
    let current: string;
    try {
      current = readFileSync(join(root, file.path), 'utf8');
    } catch {
      missing.push(file.path);
      continue;
    }
    if (current !== file.content) stale.push(file.path);
  }
  const drawn = new Set(files.map((file) => file.path));
  let present: string[] = [];
  try {
    present = readdirSync(join(root, outDir)).filter((file) => /\.(mmd|svg)$/.test(file)).map((file) => join(outDir, file));
  } catch {
    present = [];
  }
  return { missing, stale, extra: present.filter((file) => !drawn.has(file)).sort() };
}

function exportedMachines(exports: Record<string, unknown>): AnyStateMachine[] {
  const machines = Object.keys(exports)
    .sort()
    .map((key) => exports[key])
    .filter(isStateMachine);
  return [...new Set(machines)];
}

function isStateMachine(value: unknown): value is AnyStateMachine {
  return typeof value === 'object' && value !== null && 'root' in value && 'getInitialSnapshot' in value && 'implementations' in value;
}
