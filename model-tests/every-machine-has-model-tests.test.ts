/**
 * Every machine in machines/ is the specification of a real part, so every one has generated
 * path tests: `model-tests/<name>.model.test.ts`, calling `describeModel`. A machine added
 * without them fails here, by name, rather than going untested in silence.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPOSITORY = join(__dirname, '..');
const MACHINE_FILE = /^(?<name>.+)\.machine\.ts$/;

interface Survey {
  /** Every machine found, by name (`reconcile` for machines/reconcile.machine.ts). */
  machines: string[];
  /** One sentence per machine without generated path tests, naming what to create. */
  problems: string[];
}

/** Looks for each machine's model test in a checkout laid out like this one. */
async function surveyModelTests(repository: string): Promise<Survey> {
  const machines = (await readdir(join(repository, 'machines')))
    .map((file) => MACHINE_FILE.exec(file)?.groups?.name)
    .filter((name): name is string => name !== undefined)
    .sort();
  const problems: string[] = [];
  for (const name of machines) {
    const testFile = `model-tests/${name}.model.test.ts`;
    const text = await readFile(join(repository, testFile), 'utf8').catch(() => null);
    if (text === null) {
      problems.push(`machines/${name}.machine.ts has no generated path tests: create ${testFile} calling describeModel (see model-tests/harness.ts)`);
    } else if (!/\bdescribeModel\s*(<[^;]*?>)?\s*\(/.test(withoutComments(text))) {
      problems.push(`${testFile} does not call describeModel, so machines/${name}.machine.ts has no generated path tests`);
    }
  }
  return { machines, problems };
}

// A call mentioned in a doc comment is not a call.
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('generated path tests for every machine', () => {
  test('every machine in machines/ has a model test that calls describeModel', async () => {
    const { machines, problems } = await surveyModelTests(REPOSITORY);
    // The survey found the machines at all: a wrong folder or pattern would pass vacuously.
    expect(machines).toEqual(expect.arrayContaining(['adoption', 'lifecycle', 'reconcile', 'supervisor']));
    if (problems.length > 0) throw new Error(`machines without generated path tests:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  });

  describe('the survey', () => {
    let repository: string;
    beforeEach(async () => {
      repository = await mkdtemp(join(tmpdir(), 'mesh-model-survey-'));
      await mkdir(join(repository, 'machines'));
      await mkdir(join(repository, 'model-tests'));
    });
    afterEach(async () => {
      await rm(repository, { recursive: true, force: true });
    });

    const put = (file: string, text: string) => writeFile(join(repository, file), text);

    test('names a machine added without a model test, and one whose model test never calls describeModel', async () => {
      await put('machines/link.machine.ts', 'export const linkMachine = {};\n');
      await put('machines/lease.machine.ts', 'export const leaseMachine = {};\n');
      await put('machines/plan.machine.ts', 'export const planMachine = {};\n');
      await put('machines/plan.machine.test.ts', "test('x', () => {});\n");
      await put('model-tests/link.model.test.ts', "import { describeModel } from './harness';\n\ndescribeModel({ machine: linkMachine });\n");
      await put('model-tests/plan.model.test.ts', "/** Paths will come from describeModel({ machine }) once the rig exists. */\n// describeModel(spec)\ntest('todo', () => {});\n");

      const { machines, problems } = await surveyModelTests(repository);

      expect(machines).toEqual(['lease', 'link', 'plan']);
      expect(problems).toEqual([
        'machines/lease.machine.ts has no generated path tests: create model-tests/lease.model.test.ts calling describeModel (see model-tests/harness.ts)',
        'model-tests/plan.model.test.ts does not call describeModel, so machines/plan.machine.ts has no generated path tests',
      ]);
    });

    test('accepts a typed describeModel call and a spec that keeps its plan', async () => {
      await put('machines/lease.machine.ts', 'export const leaseMachine = {};\n');
      await put('model-tests/lease.model.test.ts', 'const plan = describeModel<typeof leaseMachine, Rig>({ machine: leaseMachine });\n');

      expect((await surveyModelTests(repository)).problems).toEqual([]);
    });
  });
});
