import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The layer fences (eslint.config.mjs) are lint rules, so they are only worth something if they
// fail. Each case lints a source text as if it were the named file, with the repository's own
// configuration. All cases go through one ESLint in one child process: ESLint loads its
// configuration as an ES module, which jest's module system does not, and one process per case
// would spend most of its time loading typescript-eslint.

const root = path.resolve(__dirname, '..');

interface LintMessage { ruleId: string | null; message: string }
interface Case { file: string; source: string }

const lintMany = `
const { ESLint } = require(${JSON.stringify(path.join(root, 'node_modules', 'eslint'))});
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', async () => {
  const eslint = new ESLint({ cwd: ${JSON.stringify(root)} });
  const out = [];
  for (const { file, source } of JSON.parse(input)) {
    const [result] = await eslint.lintText(source, { filePath: file });
    out.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })));
  }
  process.stdout.write(JSON.stringify(out));
});
`;

const cases = new Map<string, Case>();
let results: Map<string, LintMessage[]> | undefined;

/** Registers a source to lint as `file`; its messages are read with `messagesOf(name)`. */
function lintCase(name: string, file: string, source: string): string {
  cases.set(name, { file, source });
  return name;
}

function messagesOf(name: string): LintMessage[] {
  const messages = results?.get(name);
  if (messages === undefined) throw new Error(`no lint result for ${name}`);
  // An import kept only to be fenced is unused; that is not what these tests are about.
  return messages.filter((message) => message.ruleId !== '@typescript-eslint/no-unused-vars');
}

/** The fence's message when `name` was fenced, or a failure saying what ESLint said instead. */
function fenceMessage(name: string): string {
  const fenced = messagesOf(name).filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports' || message.ruleId === 'no-restricted-syntax');
  if (fenced.length === 0) throw new Error(`${name} was not fenced; ESLint said ${JSON.stringify(messagesOf(name))}`);
  return fenced[0]!.message;
}

const imports = (from: string): string => `import { thing } from '${from}';\nexport const x = thing;\n`;

const controllerToHost = lintCase('controller imports host', 'actors/controller/nodes/probe.ts', imports('../../host/store/host-store'));
const controllerRequiresHost = lintCase('controller requires host', 'actors/controller/nodes/probe.ts', "export const x = require('../../host/store/host-store');\n");
const controllerImportsHostLater = lintCase('controller import()s host', 'actors/controller/nodes/probe.ts', "export const x = () => import('../../host/store/host-store');\n");
const controllerTypeofHost = lintCase('controller typeof import()s host', 'actors/controller/nodes/probe.ts', "export type X = typeof import('../../host/store/host-store');\n");
const controllerToShared = lintCase('controller imports shared', 'actors/controller/nodes/probe.ts', imports('../../shared/fs/atomic-write'));
const controllerToNearHost = lintCase('controller imports a file named host-…', 'actors/controller/nodes/probe.ts', imports('./host-list'));
const controllerTest = lintCase('controller test imports host', 'actors/controller/nodes/probe.test.ts', imports('../../host/store/host-store'));
const brokerToHost = lintCase('broker imports host code', 'actors/controller/broker/auth-file.ts', imports('../../host/store/host-store'));
const hostToController = lintCase('host imports controller', 'actors/host/link/probe.ts', imports('../../controller/store/nodes.repo'));
const hostRequiresController = lintCase('host requires controller', 'actors/host/cli/probe.ts', "export const x = (require('../../controller/nodes/format-node-list') as typeof import('../../controller/nodes/format-node-list')).formatNodeList;\n");
const sharedToHost = lintCase('shared imports host', 'actors/shared/bus/probe.ts', imports('../../host/store/host-store'));
const sharedToController = lintCase('shared imports controller', 'actors/shared/bus/probe.ts', imports('../../controller/broker/broker-process'));
const sharedTestingToController = lintCase('shared testing helper imports controller', 'actors/shared/testing/probe.ts', imports('../../controller/broker/broker-process'));
const schemaToActors = lintCase('schema imports actors', 'schema/probe.ts', imports('../actors/shared/operator-error'));
const schemaTypeToActors = lintCase('schema imports a type from actors', 'schema/probe.ts', "import type { Thing } from '../actors/shared/thing';\nexport type X = Thing;\n");
const schemaTestToActors = lintCase('schema test imports actors', 'schema/probe.test.ts', imports('../actors/shared/operator-error'));
const schemaToSchema = lintCase('schema imports schema', 'schema/probe.ts', imports('./operator-error'));

beforeAll(() => {
  const run = spawnSync(process.execPath, ['-e', lintMany], { cwd: root, input: JSON.stringify([...cases.values()]), encoding: 'utf8' });
  if (run.status !== 0 || run.stdout.trim() === '') throw new Error(`eslint did not run: ${run.stderr}`);
  const all = JSON.parse(run.stdout) as LintMessage[][];
  results = new Map([...cases.keys()].map((name, index) => [name, all[index]!]));
}, 120_000);

describe('the layer fences', () => {
  test.each([controllerToHost, controllerRequiresHost, controllerImportsHostLater, controllerTypeofHost])('fail when the %s code, naming where shared code goes', (name) => {
    expect(fenceMessage(name)).toMatch(/the controller does not import host code: move what both sides need to actors\/shared\//);
  });

  test.each([hostToController, hostRequiresController])('fail when the %s code', (name) => {
    expect(fenceMessage(name)).toMatch(/the host does not import controller code/);
  });

  test.each([sharedToHost, sharedToController, sharedTestingToController])('fail when %s code', (name) => {
    expect(fenceMessage(name)).toMatch(/actors\/shared\/ imports neither the host nor the controller/);
  });

  test.each([schemaToActors, schemaTypeToActors, schemaTestToActors])('fail when %s', (name) => {
    expect(fenceMessage(name)).toMatch(/schema\/ imports nothing from actors\//);
  });

  test.each([controllerToShared, controllerToNearHost, controllerTest, schemaToSchema])('let through: %s', (name) => {
    expect(messagesOf(name)).toEqual([]);
  });

  test('fence the broker configuration files like any controller code', () => {
    expect(fenceMessage(brokerToHost)).toMatch(/the controller does not import host code/);
  });
});
