import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Cli } from 'clipanion';
import { controlCli } from '../../controller/cli/main';
import { hostCli } from '../../host/cli/main';
import { namePlaceholders } from './named-placeholders';
import { runCli } from './run-cli';
import { verbSpecsOf } from './verb-specs';

// What a person at either command line expects of it: option values named as words in every
// usage it prints, `--version` and `version`, the exit statuses in every verb's help, and a
// wrong command line answered on stderr with status 2.

const plain = { isTTY: false } as const;
const clis: Array<[string, () => Cli]> = [
  ['mesh-control', () => controlCli(plain)],
  ['nox-mesh-host', () => hostCli(undefined, plain)],
];

async function run(make: () => Cli, argv: string[], binary: string): Promise<{ status: number; stdout: string; stderr: string }> {
  const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
  let stdout = '';
  let stderr = '';
  streams.stdout.on('data', (chunk) => (stdout += String(chunk)));
  streams.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const status = await runCli(make, argv, binary, streams);
  return { status, stdout, stderr };
}

describe('option placeholders', () => {
  test('name the value after the option, and leave flags and positionals alone', () => {
    expect(namePlaceholders('tool x [--json] [--dir #0] [--ttl #0] <--token #0> <NAME> [ID]')).toBe('tool x [--json] [--dir DIR] [--ttl DURATION] <--token TOKEN> <NAME> [ID]');
    expect(namePlaceholders('--log-format #0')).toBe('--log-format FORMAT');
    expect(namePlaceholders('-o,--output #0 #1')).toBe('-o,--output OUTPUT OUTPUT');
  });

  test.each(clis)('%s: no usage it prints says #0', async (binary, make) => {
    const cli = make();
    const texts = [cli.usage(null)];
    for (const verb of verbSpecsOf(cli)) {
      texts.push((await run(make, [...verb.words, '--help'], binary)).stdout);
      expect(verb.options.every((option) => option.value === undefined || /^[A-Z][A-Z:-]*$/.test(option.value))).toBe(true);
    }
    texts.push((await run(make, ['no-such-verb'], binary)).stderr);
    for (const text of texts) expect(text).not.toMatch(/#\d/);
    expect(texts.join('\n')).toMatch(/--dir DIR|--root DIR/);
  });
});

describe.each(clis)('%s', (binary, make) => {
  test('--version and version both print the version', async () => {
    const flag = await run(make, ['--version'], binary);
    const verb = await run(make, ['version', '--json'], binary);
    expect(flag.status).toBe(0);
    expect(verb.status).toBe(0);
    const document = JSON.parse(verb.stdout) as { program: string; version: string };
    expect(document.program).toBe(binary);
    expect(flag.stdout.trim()).toBe(document.version);
  });

  test('every verb lists the exit statuses in its help', async () => {
    for (const verb of verbSpecsOf(make())) {
      const help = (await run(make, [...verb.words, '--help'], binary)).stdout;
      expect({ verb: verb.words.join(' '), says: /Exit status: 0 .*; 1 .*; 2 usage/s.test(help.replace(/\s+/g, ' ')) }).toEqual({ verb: verb.words.join(' '), says: true });
    }
  });

  test('a wrong command line is said on stderr, with nothing on stdout, and exits 2', async () => {
    const result = await run(make, ['no-such-verb'], binary);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Command not found/);
  });

  test('help piped into a file carries no escape codes', async () => {
    const result = await run(make, ['--help'], binary);
    expect(result.stdout).toMatch(/General commands/);
    expect(result.stdout).not.toContain('\u001b[');
  });
});

describe('the mesh directory', () => {
  const bin = path.resolve(__dirname, '..', '..', '..', 'bin', 'mesh-control');
  const nodes = (args: string[], env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [bin, 'nodes', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

  test('comes from MESH_DIR when --dir is not given, and --dir wins over it', () => {
    const fromVariable = nodes([], { MESH_DIR: '/nonexistent/mesh-from-variable' });
    expect(fromVariable.status).toBe(1);
    expect(fromVariable.stderr).toContain('"/nonexistent/mesh-from-variable"');
    const fromFlag = nodes(['--dir', '/nonexistent/mesh-from-flag'], { MESH_DIR: '/nonexistent/mesh-from-variable' });
    expect(fromFlag.stderr).toContain('"/nonexistent/mesh-from-flag"');
    expect(fromFlag.stderr).not.toContain('mesh-from-variable');
  });
});
