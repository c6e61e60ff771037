import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Every mesh-control verb loads the CLI's command table, the dashboard's included. Graphviz
// (compiled to WebAssembly, megabytes) and the page are for `mesh-control dashboard` alone.

const root = path.resolve(__dirname, '..', '..', '..');

test('the controller\'s verbs load neither Graphviz nor the dashboard\'s page until the dashboard starts', () => {
  const run = spawnSync(process.execPath, ['-e', `
    require(${JSON.stringify(path.join(root, 'scripts', 'register.cjs'))});
    require(${JSON.stringify(path.join(root, 'actors', 'controller', 'cli', 'main.ts'))});
    const loaded = Object.keys(require.cache).filter((file) => /@viz-js|dashboard-page|dashboard-charts/.test(file));
    process.stdout.write(JSON.stringify(loaded));
  `], { cwd: root, encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual([]);
});
