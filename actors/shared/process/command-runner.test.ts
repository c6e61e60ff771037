import { ProcessRunner, describeFailure, succeeded } from './command-runner';

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
