import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareCharts, drawCharts, findMachineFiles, REPOSITORY_ROOT } from './draw-charts';

describe('drawing the charts', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'charts-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('finds every machine file in the folder, and not its tests or helpers', async () => {
    for (const file of ['b.machine.ts', 'a.machine.ts', 'a.machine.test.ts', 'helpers.ts']) await writeFile(join(dir, file), '');
    expect(findMachineFiles(dir)).toEqual(['a.machine.ts', 'b.machine.ts']);
  });

  test('draws a Mermaid and an SVG chart per machine, byte for byte the same on a second run', async () => {
    const places = { root: REPOSITORY_ROOT, machineFiles: ['machines/lifecycle.machine.ts'] };
    const first = await drawCharts(places);
    const second = await drawCharts(places);
    expect(first.failures).toEqual([]);
    expect(first.files.map((file) => file.path)).toEqual(['docs/charts/lifecycle.mmd', 'docs/charts/lifecycle.svg']);
    expect(second.files).toEqual(first.files);
  });

  test('reports a machine file that exports no machine instead of skipping it', async () => {
    await mkdir(join(dir, 'machines'));
    await writeFile(join(dir, 'machines', 'empty.machine.ts'), 'export const notAMachine = 1;\n');
    const run = await drawCharts({ root: dir });
    expect(run.failures).toEqual([{ source: 'machines/empty.machine.ts', error: 'exports no state machine' }]);
  });

  test('--check finds missing, stale and leftover charts', async () => {
    const files = [{ path: 'docs/charts/a.mmd', content: 'one\n' }, { path: 'docs/charts/a.svg', content: '<svg/>\n' }];
    expect(compareCharts(dir, files)).toEqual({ missing: ['docs/charts/a.mmd', 'docs/charts/a.svg'], stale: [], extra: [] });
    await mkdir(join(dir, 'docs', 'charts'), { recursive: true });
    for (const file of files) await writeFile(join(dir, file.path), file.content);
    expect(compareCharts(dir, files)).toEqual({ missing: [], stale: [], extra: [] });
    await writeFile(join(dir, 'docs/charts/a.mmd'), 'edited by hand\n');
    await writeFile(join(dir, 'docs/charts/gone.svg'), '<svg/>\n');
    expect(compareCharts(dir, files)).toEqual({ missing: [], stale: ['docs/charts/a.mmd'], extra: ['docs/charts/gone.svg'] });
  });
});
