import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The fence around machines/ is a lint rule, so it is only worth something if it fails. These
// tests lint source text as if it were a file under machines/ (and, for contrast, under actors/).

const root = path.resolve(__dirname, '..');
const eslintBin = path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');

interface LintMessage { ruleId: string | null; message: string }

function lintAs(filename: string, source: string): LintMessage[] {
  const run = spawnSync(process.execPath, [eslintBin, '--format', 'json', '--stdin', '--stdin-filename', filename], {
    cwd: root,
    input: source,
    encoding: 'utf8',
  });
  if (run.stdout.trim() === '') throw new Error(`eslint printed nothing: ${run.stderr}`);
  const [result] = JSON.parse(run.stdout) as Array<{ messages: LintMessage[] }>;
  return result!.messages;
}

const pure = "import { setup } from 'xstate';\nexport const m = setup({}).createMachine({ initial: 'a', states: { a: {} } });\n";

describe('the machines/ import fence', () => {
  test('accepts a pure machine', () => {
    expect(lintAs('machines/probe.machine.ts', pure)).toEqual([]);
  });

  test('fails a machine that imports node:fs', () => {
    const messages = lintAs('machines/probe.machine.ts', `import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n`);
    expect(messages.map((m) => m.ruleId)).toContain('no-restricted-imports');
    expect(messages.find((m) => m.ruleId === 'no-restricted-imports')!.message).toMatch(/machines\/ is pure/);
  });

  test.each([
    ['pg', "import { Client } from 'pg';\nexport const c = Client;\n"],
    ['@nats-io/transport-node', "import { connect } from '@nats-io/transport-node';\nexport const c = connect;\n"],
    ['libsodium-wrappers', "import sodium from 'libsodium-wrappers';\nexport const s = sodium;\n"],
    ['fs (bare built-in)', "import fs from 'fs';\nexport const f = fs;\n"],
  ])('fails a machine that imports %s', (_name, source) => {
    expect(lintAs('machines/probe.machine.ts', source).map((m) => m.ruleId)).toContain('no-restricted-imports');
  });

  test.each([
    ['process', 'export const env = process.env.HOME;\n', 'no-restricted-globals'],
    ['console', "console.log('x');\n", 'no-restricted-globals'],
    ['Date.now', 'export const t = Date.now();\n', 'no-restricted-properties'],
    ['new Date()', 'export const t = new Date();\n', 'no-restricted-syntax'],
    ['Math.random', 'export const r = Math.random();\n', 'no-restricted-properties'],
    ['setTimeout', 'setTimeout(() => undefined, 1);\n', 'no-restricted-globals'],
  ])('fails a machine that uses %s', (_name, source, rule) => {
    expect(lintAs('machines/probe.machine.ts', source).map((m) => m.ruleId)).toContain(rule);
  });

  test('allows the same code outside machines/', () => {
    const source = "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\nexport const t = Date.now();\n";
    expect(lintAs('actors/host/probe.ts', source)).toEqual([]);
  });
});

describe('the host memory fence', () => {
  test.each([
    ['node:fs/promises', "import { readFile } from 'node:fs/promises';\nexport const r = readFile;\n"],
    ['promises from node:fs', "import { promises as fs } from 'node:fs';\nexport const r = fs.readFile;\n"],
    ['fs.promises', "import fs from 'node:fs';\nexport const r = fs.promises.readFile;\n"],
    ['node:perf_hooks', "import { performance } from 'node:perf_hooks';\nexport const t = performance.now();\n"],
    ['the performance global', 'export const t = performance.now();\n'],
    ['Date.prototype.toISOString', 'export const t = new Date().toISOString();\n'],
  ])('fails host code that reaches %s, naming what to use instead', (_name, source) => {
    const messages = lintAs('actors/host/probe.ts', source).filter((m) => m.ruleId !== '@typescript-eslint/no-unused-vars');
    expect(messages.length).toBeGreaterThan(0);
    expect(messages[0]!.message).toMatch(/actors\/shared\/(fs\/promised-fs|time\/monotonic-ms|time\/utc-timestamp)/);
    expect(lintAs('actors/shared/probe.ts', source).length).toBeGreaterThan(0);
  });

  test.each([
    ['pino', "import pino from 'pino';\nexport const log = pino();\n", /log and metrics libraries/],
    ['a pino transport', "import build from 'pino-abstract-transport';\nexport const b = build;\n", /log and metrics libraries/],
    ['prom-client', "import { Registry } from 'prom-client';\nexport const r = new Registry();\n", /log and metrics libraries/],
    ['node:http', "import http from 'node:http';\nexport const s = http.createServer();\n", /listens on no socket/],
    ['https', "import { createServer } from 'https';\nexport const s = createServer;\n", /listens on no socket/],
  ])('fails host and shared code that imports %s, the controller\'s alone', (_name, source, message) => {
    for (const file of ['actors/host/probe.ts', 'actors/host/run/probe.ts', 'actors/shared/bus/probe.ts']) {
      const messages = lintAs(file, source).filter((m) => m.ruleId === 'no-restricted-imports');
      expect(messages.map((m) => m.message)).toEqual([expect.stringMatching(message)]);
    }
    expect(lintAs('actors/controller/metrics/probe.ts', source)).toEqual([]);
  });

  test('allows the same code in the controller and in a host test', () => {
    const source = "import { readFile } from 'node:fs/promises';\nexport const r = readFile;\nexport const t = performance.now();\nexport const d = new Date().toISOString();\n";
    expect(lintAs('actors/controller/probe.ts', source)).toEqual([]);
    expect(lintAs('actors/host/probe.test.ts', source)).toEqual([]);
  });
});
