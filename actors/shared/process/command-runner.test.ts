import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const result = await runner.run(['sleep', '5'], { timeoutMs: 100 });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGTERM');
    expect(result.durationMs).toBeLessThan(3000);
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
