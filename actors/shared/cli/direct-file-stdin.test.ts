import { spawnSync } from 'node:child_process';
import { closeSync, openSync, promises as fs, readSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DescriptorInput, isFileInput } from './direct-file-stdin';

const REGISTER = path.join(__dirname, '..', '..', '..', 'scripts', 'register.cjs');
const MODULE = path.join(__dirname, 'direct-file-stdin.ts');

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'direct-stdin-'));
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

/** Runs a script in a Node of its own with `stdin` as its standard input; what it printed. */
function runWithInput(script: string, stdin: 'ignore' | number): { stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['-r', REGISTER, '-e', script], { stdio: [stdin, 'pipe', 'pipe'], encoding: 'utf8' });
  return { stdout: run.stdout, stderr: run.stderr };
}

describe('isFileInput', () => {
  test('is true of a regular file and of the null device, false of a pipe and of a closed descriptor', async () => {
    const file = path.join(dir, 'input');
    await fs.writeFile(file, 'x');
    const fd = openSync(file, 'r');
    const nullFd = openSync('/dev/null', 'r');
    try {
      expect(isFileInput(fd)).toBe(true);
      expect(isFileInput(nullFd)).toBe(true);
    } finally {
      closeSync(fd);
      closeSync(nullFd);
    }
    expect(isFileInput(fd)).toBe(false);
    const piped = spawnSync(process.execPath, ['-r', REGISTER, '-e', `process.stdout.write(String(require(${JSON.stringify(MODULE)}).isFileInput(0)))`], { input: 'x', encoding: 'utf8' });
    expect(piped.stdout).toBe('false');
  });
});

describe('DescriptorInput', () => {
  test('reads a file from the descriptor\'s offset to its end, and leaves the descriptor open', async () => {
    const file = path.join(dir, 'input');
    const text = 'line\n'.repeat(40_000);
    await fs.writeFile(file, `skip${text}`);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, Buffer.alloc(4));
      expect(await collect(new DescriptorInput(fd))).toBe(text);
      expect(readSync(fd, Buffer.alloc(1), 0, 1, 0)).toBe(1); // still open
    } finally {
      closeSync(fd);
    }
  });
});

describe('useDirectFileStdin', () => {
  const probe = (use: boolean) => `
    ${use ? `require(${JSON.stringify(MODULE)}).useDirectFileStdin();` : ''}
    process.stdin;
    const loaded = process.moduleLoadList.filter((name) => /fs\\/streams|fs\\/promises|readline/.test(name));
    process.stdout.write(JSON.stringify(loaded));
  `;

  test('with /dev/null for input, process.stdin loads neither fs streams, fs/promises nor readline', () => {
    const run = runWithInput(probe(true), 'ignore');
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([]);
    // Node's own stdin for the same input loads them all, which is what this saves.
    expect(JSON.parse(runWithInput(probe(false), 'ignore').stdout)).toEqual(expect.arrayContaining(['NativeModule internal/fs/streams', 'NativeModule internal/readline/interface']));
  });

  test('a file given as input is read through process.stdin as before', async () => {
    const file = path.join(dir, 'input');
    await fs.writeFile(file, 'the whole input\n');
    const fd = openSync(file, 'r');
    try {
      const run = runWithInput(`
        require(${JSON.stringify(MODULE)}).useDirectFileStdin();
        let text = '';
        process.stdin.on('data', (chunk) => { text += chunk; }).on('end', () => process.stdout.write(JSON.stringify({ text, kind: process.stdin.constructor.name })));
      `, fd);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual({ text: 'the whole input\n', kind: 'DescriptorInput' });
    } finally {
      closeSync(fd);
    }
  });

  test('a pipe keeps Node\'s own stream', () => {
    const run = spawnSync(process.execPath, ['-r', REGISTER, '-e', `require(${JSON.stringify(MODULE)}).useDirectFileStdin(); process.stdout.write(process.stdin.constructor.name); process.exit(0)`], { input: 'x', encoding: 'utf8' });
    expect(run.stdout).toBe('Socket');
  });
});
