import { spawn } from 'node:child_process';
import path from 'node:path';

// A process that writes far more than a pipe holds to a reader that closes after the first
// chunk: with the guard it ends with status 0 and says nothing; without, Node reports EPIPE.
function writeToClosedPipe(guarded: boolean): Promise<{ code: number | null; stderr: string }> {
  const guard = path.join(__dirname, 'quiet-on-closed-output');
  const script = `
    ${guarded ? `require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'scripts', 'register.cjs'))}); require(${JSON.stringify(guard)}).quietOnClosedOutput();` : ''}
    const line = 'x'.repeat(1023) + '\\n';
    let written = 0;
    const more = () => { while (written < 4096) { written += 1; if (!process.stdout.write(line)) { process.stdout.once('drain', more); return; } } };
    more();
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('quietOnClosedOutput', () => {
  test('ends the process with status 0 and no stack trace when the reader of standard output goes away', async () => {
    const { code, stderr } = await writeToClosedPipe(true);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  test('is needed: without it the same process reports EPIPE', async () => {
    const { code, stderr } = await writeToClosedPipe(false);
    expect(stderr).toMatch(/EPIPE/);
    expect(code).not.toBe(0);
  });
});
