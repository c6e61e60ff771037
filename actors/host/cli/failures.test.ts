import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// How nox-mesh-host says a failure, as a script reading its pipes sees it: bin/nox-mesh-host in
// a real process. Text for a person goes to stderr; under --json, stdout holds one JSON
// document and nothing else; usage errors exit 2; nothing is coloured for a pipe.

const repo = path.resolve(__dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'nox-mesh-host');
// A colour terminal's environment, as a person's shell has it, with stdout a pipe.
const colourTerminal = { ...process.env, TERM: 'xterm-256color', COLORTERM: 'truecolor' } as NodeJS.ProcessEnv;
delete colourTerminal.FORCE_COLOR;
delete colourTerminal.NO_COLOR;

function host(args: string[], env: NodeJS.ProcessEnv = colourTerminal) {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const ESCAPE = '\u001b[';

describe('usage errors', () => {
  test('an unknown verb exits 2 and says so on stderr, leaving stdout empty', () => {
    const result = host(['frobnicate']);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Command not found/);
    expect(result.stderr).not.toContain(ESCAPE);
  });

  test('a missing argument under --json is one JSON document on stdout, and text on stderr', () => {
    const result = host(['apply', '--json']);
    expect(result.status).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'UsageError', next: expect.stringMatching(/--help/) } });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/Not enough positional arguments/);
  });

  test('an unknown option under --json is one JSON document too', () => {
    const result = host(['reconcile', '--frobnicate', '--json']);
    expect(result.status).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'UsageError' } });
  });
});

describe('operator errors', () => {
  test('under --json: the document on stdout, the two lines on stderr, no stack', () => {
    const result = host(['owned', '--root', '/nonexistent-root-for-a-test', '--json']);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'RootDirectoryMissing', value: '/nonexistent-root-for-a-test' } });
    expect(result.stderr).toMatch(/^error: the root directory does not exist/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  test('without --json: stderr only', () => {
    const result = host(['owned', '--root', '/nonexistent-root-for-a-test']);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: .*\nnext: /);
  });
});

describe('colour', () => {
  test('help piped into another program is plain, whatever TERM says', () => {
    for (const args of [['--help'], ['apply', '--help']]) {
      const result = host(args);
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/nox-mesh-host/);
      expect(result.stdout).not.toContain(ESCAPE);
    }
  });

  test('FORCE_COLOR still asks for colour', () => {
    expect(host(['--help'], { ...colourTerminal, FORCE_COLOR: '1' }).stdout).toContain(ESCAPE);
  });

  test('each verb\'s help lists the exit statuses', () => {
    for (const verb of ['apply', 'reconcile', 'owned', 'run']) {
      expect(host([verb, '--help']).stdout).toMatch(/Exit status: 0 converged[\s\S]*1 something\s+failed[\s\S]*2 usage[\s\S]*4 the\s+store\s+is\s+damaged/);
    }
  });
});

describe('run --json', () => {
  let root: string;
  beforeEach(async () => { root = await fs.mkdtemp(path.join(os.tmpdir(), 'run-json-')); });
  afterEach(async () => { await fs.rm(root, { recursive: true, force: true }); });

  test('writes one JSON object per line, down to the last', async () => {
    const child = spawn(process.execPath, [bin, 'run', '--json', '--root', root], { env: colourTerminal, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += String(chunk); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Stopped once it has said something (it waits to be enrolled), so there is a last line.
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
      if (stdout.includes('\n')) resolve();
    }));
    child.stdout.on('data', (chunk) => { stdout += String(chunk); });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(typeof JSON.parse(line)).toBe('object');
    expect(JSON.parse(lines[lines.length - 1]!)).toEqual({ stopped: true });
    expect(stderr).toBe('');
  }, 30_000);
});
