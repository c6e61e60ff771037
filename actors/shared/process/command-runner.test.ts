import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { RunResult } from './command-runner';
import { ProcessRunner, describeFailure, succeeded } from './command-runner';
import { killLeftover, processGone, waitUntilGone } from './testing/process-gone';

const runner = new ProcessRunner();

describe('ProcessRunner', () => {
  test('runs a real program without a shell and captures its output and status', async () => {
    const result = await runner.run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false });
    expect(succeeded(result)).toBe(false);
    expect(describeFailure(result)).toBe('sh -c echo out; echo err >&2; exit 3: exited 3: err');
  });

  test('ends a program that outlives its timeout and says so', async () => {
    // Ended by the runner's signal, not waited out: `sleep` left alone exits 0 with no signal.
    const result = await runner.run(['sleep', '30'], { timeoutMs: 100 });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGTERM');
    expect(result.code).toBeNull();
  });

  test('keeps output bounded and says how much was not kept', async () => {
    const result = await runner.run(['sh', '-c', 'head -c 10000 /dev/zero | tr "\\0" x'], { maxOutputBytes: 100 });
    expect(result.stdout).toBe(`${'x'.repeat(100)}\n… 9900 more bytes not kept`);
  });

  test('a program that does not exist is a spawn error, not a crash', async () => {
    const result = await runner.run(['/nonexistent/program']);
    expect(result.spawnError).toMatch(/ENOENT/);
    expect(succeeded(result)).toBe(false);
  });

  test('passes environment, working directory and input', async () => {
    const result = await runner.run(['sh', '-c', 'echo "$GREETING $(pwd)"; cat'], { env: { GREETING: 'hi' }, cwd: '/tmp', input: 'piped' });
    expect(result.stdout).toBe('hi /tmp\npiped');
  });
});

describe('ProcessRunner and what a program leaves behind', () => {
  // Pids of background processes the programs below print, ended after each test whatever it did.
  const leftovers: number[] = [];
  afterEach(() => {
    for (const pid of leftovers.splice(0)) killLeftover(pid);
  });
  function backgroundPid(result: RunResult): number {
    const pid = Number.parseInt(result.stdout.split('\n')[0] ?? '', 10);
    expect(pid).toBeGreaterThan(1);
    leftovers.push(pid);
    return pid;
  }

  test('a timeout ends the whole process group, and a background child holding the pipes does not hold the result', async () => {
    const result = await runner.run(['sh', '-c', 'sleep 60 & echo $!; echo started; wait'], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.stdout).toContain('started');
    expect(await waitUntilGone(backgroundPid(result))).toBe(true);
  }, 30_000);

  test('a child that ignores SIGTERM is killed after the grace', async () => {
    const result = await runner.run(['sh', '-c', 'trap "" TERM; sleep 60 & echo $!; wait; wait'], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(await waitUntilGone(backgroundPid(result))).toBe(true);
  }, 30_000);

  test('a process that left the group with setsid and holds the pipes does not hold the result past the kill', async () => {
    const result = await runner.run(['sh', '-c', "setsid sh -c 'echo $$; exec sleep 60' & wait"], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    // It left the group, so the timeout cannot reach it: the test ends it.
    expect(processGone(backgroundPid(result))).toBe(false);
  }, 30_000);

  test('a program that exits 0 is done without waiting for a background child, which is left running', async () => {
    const result = await runner.run(['sh', '-c', 'sleep 60 & echo $!; echo started']);
    expect(succeeded(result)).toBe(true);
    expect(result.stdout).toContain('started');
    const pid = backgroundPid(result);
    expect(processGone(pid)).toBe(false);
  }, 30_000);

  test('aborting ends the whole process group', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mesh-runner-'));
    try {
      const abort = new AbortController();
      const running = runner.run(['sh', '-c', 'sleep 60 & echo $! > started.tmp; mv started.tmp started; wait'], { signal: abort.signal, cwd: dir });
      const started = join(dir, 'started');
      while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 20));
      const pid = Number.parseInt(readFileSync(started, 'utf8'), 10);
      leftovers.push(pid);
      abort.abort();
      const result = await running;
      expect(succeeded(result)).toBe(false);
      expect(await waitUntilGone(pid)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('ProcessRunner in a host ended by a signal', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'mesh-runner-host-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  // A host process of its own (the runner bundled to plain JavaScript), running one program
  // that starts a background child, so the test can end that host as an operator would.
  async function hostRunning(handles = false): Promise<{ host: ChildProcess; grandchild: number }> {
    const script = join(dir, 'host.js');
    // Handling the signal, it aborts the run as `nox-mesh-host run` does, and exits 0 once done.
    const handler = handles
      ? "const stop = new AbortController(); process.once('SIGTERM', () => stop.abort());"
      : 'const stop = { signal: undefined };';
    const program = "['sh', '-c', 'sleep 60 & echo $! > started.tmp; mv started.tmp started; wait']";
    buildSync({
      stdin: {
        contents: `const { ProcessRunner } = require(${JSON.stringify(join(__dirname, 'command-runner.ts'))});\n${handler}\n` +
          `new ProcessRunner().run(${program}, { cwd: process.argv[2], signal: stop.signal }).then(() => process.exit(0));`,
        resolveDir: __dirname,
        loader: 'ts',
      },
      bundle: true, platform: 'node', outfile: script, logLevel: 'silent',
    });
    const host = spawn(process.execPath, [script, dir], { stdio: 'ignore' });
    const started = join(dir, 'started');
    const until = Date.now() + 20_000;
    while (!existsSync(started) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    const grandchild = Number.parseInt(readFileSync(started, 'utf8'), 10);
    return { host, grandchild };
  }

  test.each(['SIGTERM', 'SIGINT'] as const)('%s to a host that does not handle it ends what it was running, and the host as before', async (signal) => {
    const { host, grandchild } = await hostRunning();
    try {
      const ended = new Promise<NodeJS.Signals | null>((resolve) => host.once('exit', (_code, by) => resolve(by)));
      host.kill(signal);
      expect(await ended).toBe(signal);
      expect(await waitUntilGone(grandchild)).toBe(true);
    } finally {
      killLeftover(grandchild);
      host.kill('SIGKILL');
    }
  }, 30_000);

  test('a host that handles the signal itself is left to: it lives on, and its abort ends the program', async () => {
    const { host, grandchild } = await hostRunning(true);
    try {
      const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => host.once('exit', (code, by) => resolve([code, by])));
      host.kill('SIGTERM');
      expect(await ended).toEqual([0, null]);
      expect(await waitUntilGone(grandchild)).toBe(true);
    } finally {
      killLeftover(grandchild);
      host.kill('SIGKILL');
    }
  }, 30_000);
});
