import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearRestartDue, markRestartDue, readRestartDue, RESTART_DUE_FILE } from './restart-due';

let stateDir: string;

beforeEach(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'restart-due-'));
});

afterEach(async () => {
  await fs.rm(stateDir, { recursive: true, force: true });
});

describe('the restart-due flag', () => {
  test('is not set in a fresh state directory', async () => {
    expect(await readRestartDue(stateDir)).toBeUndefined();
  });

  test('once marked, says what was installed, in a file a person can read', async () => {
    await markRestartDue(stateDir, 'nox-mesh-host 0.2.0, package 0.2.0-1');

    expect(await readRestartDue(stateDir)).toBe('nox-mesh-host 0.2.0, package 0.2.0-1');
    expect(await fs.readFile(path.join(stateDir, RESTART_DUE_FILE), 'utf8')).toBe('nox-mesh-host 0.2.0, package 0.2.0-1\n');
  });

  test('is gone once cleared, and clearing it twice is fine', async () => {
    await markRestartDue(stateDir, 'nox-mesh-host 0.2.0');

    await clearRestartDue(stateDir);
    await clearRestartDue(stateDir);

    expect(await readRestartDue(stateDir)).toBeUndefined();
  });
});
