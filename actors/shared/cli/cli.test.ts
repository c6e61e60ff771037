import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { version } from '../../../package.json';

// The two CLIs run from a checkout through bin/. Verbs that are planned but not built say so
// and exit 3, rather than pretending or failing with a stack trace.

const root = path.resolve(__dirname, '..', '..', '..');

function run(bin: string, args: string[]) {
  return spawnSync(process.execPath, [path.join(root, 'bin', bin), ...args], { encoding: 'utf8' });
}

describe('the command lines from a checkout', () => {
  test('nox-mesh-host version prints the package version, and JSON under --json', () => {
    const text = run('nox-mesh-host', ['version']);
    expect(text.status).toBe(0);
    expect(text.stdout.trim()).toBe(`nox-mesh-host ${version}`);
    const json = run('nox-mesh-host', ['version', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ program: 'nox-mesh-host', version });
  });

  test('an unknown verb is a usage error, not a crash', () => {
    const result = run('nox-mesh-host', ['frobnicate']);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/Command not found/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
