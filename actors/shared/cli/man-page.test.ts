import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Cli } from 'clipanion';
import { controllerManual } from '../../controller/cli/manual';
import { controlCli } from '../../controller/cli/main';
import { hostManual } from '../../host/cli/manual';
import { hostCli } from '../../host/cli/main';
import { runCli } from './run-cli';
import { verbSpecsOf } from './verb-specs';

// Both manual pages rendered by the real man(1) and read against each verb's `--help`, as a
// person would compare them: the same usage, description, options and examples.

const plain = { isTTY: false } as const;

/** Text with its spacing made one space, as a page and help wrap it differently. */
function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

async function help(make: () => Cli, words: string[], binary: string): Promise<string> {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk) => (text += String(chunk)));
  await runCli(make, [...words, '--help'], binary, { stdout, stderr: new PassThrough() });
  return text;
}

async function rendered(page: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-man-'));
  try {
    const file = path.join(dir, 'page.1');
    await fs.writeFile(file, page);
    return execFileSync('man', ['-l', file], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '100', MAN_KEEP_FORMATTING: '', LANG: 'C.UTF-8' } });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

describe.each([
  ['mesh-control', () => controlCli(plain), controllerManual],
  ['nox-mesh-host', () => hostCli(undefined, plain), hostManual],
] as Array<[string, () => Cli, () => string]>)('the manual page of %s', (binary, make, manual) => {
  test("says every verb's usage, description, options and examples as its --help does", async () => {
    const page = flat(await rendered(manual()));
    const verbs = verbSpecsOf(make());
    expect(verbs.length).toBeGreaterThan(8);
    for (const verb of verbs) {
      const text = await help(make, verb.words, binary);
      const usage = text.split('\n').find((line) => line.startsWith(`$ ${binary} ${verb.words.join(' ')}`))?.slice(2);
      const wanted = [usage ?? `(no usage line in --help of ${verb.words.join(' ')})`, verb.description, ...verb.options.map((option) => option.description), ...verb.examples.map(([, line]) => line)];
      for (const line of wanted) expect({ verb: verb.words.join(' '), line, onPage: page.includes(flat(line)) }).toEqual({ verb: verb.words.join(' '), line, onPage: true });
      expect(flat(text)).toContain(flat(verb.description));
    }
  });

  test('ends with the exit statuses and names what else to read', async () => {
    const page = await rendered(manual());
    expect(page).toMatch(/EXIT STATUS\s+0 /);
    expect(page).toMatch(/SEE ALSO\s+\S+\(\d\)/);
  });
});
