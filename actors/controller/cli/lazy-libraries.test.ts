import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Every mesh-control verb loads the CLI's whole command table, serve's included. pino and
// prom-client take a tenth of a second or more and megabytes to load, and only `serve` with
// --log-format json or --metrics-listen needs them, so loading them is left to those.

const root = path.resolve(__dirname, '..', '..', '..');

function librariesLoadedAfter(script: string): string[] {
  const run = spawnSync(process.execPath, ['-e', `
    require(${JSON.stringify(path.join(root, 'scripts', 'register.cjs'))});
    require(${JSON.stringify(path.join(root, 'actors', 'controller', 'cli', 'main.ts'))});
    ${script}
    const names = new Set(Object.keys(require.cache).map((file) => /node_modules\\/(pino|prom-client)\\//.exec(file)?.[1]).filter(Boolean));
    process.stdout.write(JSON.stringify([...names].sort()));
  `], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the probe did not run: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[];
}

test('the controller\'s verbs load neither pino nor prom-client until serve asks for them', () => {
  expect(librariesLoadedAfter('')).toEqual([]);
  const logs = path.join(root, 'actors', 'controller', 'logs', 'controller-log.ts');
  expect(librariesLoadedAfter(`require(${JSON.stringify(logs)}).controllerLog({ format: 'json', write: () => undefined });`)).toEqual(['pino']);
});
