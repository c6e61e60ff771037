import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { runningVersion } from '../../shared/version';
import { LOADED_MODULES_PRELOAD, loadedModules, packagesAmong } from '../run/testing/loaded-modules';
import { hostCli } from './main';

// Which verbs a command line registers, and what a verb run as a person runs it
// (bin/nox-mesh-host in a real process) loads.

const repo = path.resolve(__dirname, '..', '..', '..');
const ALL_VERBS = ['version', 'profile', 'inventory', 'owned', 'apply', 'reconcile', 'bundle', 'briefing', 'enrol', 'run', 'status', 'tree', 'completion'];

function verbsOf(verb?: string): string[] {
  return hostCli(verb).definitions().map((definition) => definition.path.replace(/^nox-mesh-host ?/, ''));
}

describe('the nox-mesh-host command line', () => {
  test('registers only the verb a command line starts with', () => {
    expect(verbsOf('apply')).toEqual(['apply']);
    expect(verbsOf('version')).toEqual(['version']);
  });

  test('registers every verb, in the order help lists them, when the first word names none', () => {
    for (const first of [undefined, '--help', 'aply', 'constructor']) {
      expect(verbsOf(first)).toEqual(ALL_VERBS);
    }
  });

  test('version loads neither the schemas, libsodium, the NATS client nor the state machines', () => {
    const run = spawnSync(process.execPath, ['-r', LOADED_MODULES_PRELOAD, path.join(repo, 'bin', 'nox-mesh-host'), 'version'], { encoding: 'utf8' });

    expect(run.stdout).toBe(`nox-mesh-host ${runningVersion()}\n`);
    expect(run.status).toBe(0);
    // The checkout compiles TypeScript with swc; the host itself needs clipanion alone.
    expect(packagesAmong(loadedModules(run.stderr)).filter((name) => !name.startsWith('@swc/'))).toEqual(['clipanion']);
  });
});
