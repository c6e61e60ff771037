import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchFilesOf } from './launch-files';
import { LaunchStateUnwritable } from './launch-state-errors';
import { recordCompletedReconcile } from './record-completed-reconcile';
import { runningPackageVersion } from './running-package-version';
import { runningVersion } from '../../shared/version';

let stateDir: string;

beforeEach(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'launch-state-'));
});

afterEach(async () => {
  await fs.chmod(stateDir, 0o700).catch(() => undefined);
  await fs.rm(stateDir, { recursive: true, force: true });
});

const read = (file: string) => fs.readFile(file, 'utf8').catch(() => null);

describe('recordCompletedReconcile', () => {
  test('writes known-good with the running version and removes the counter and the roll-back marker', async () => {
    const files = launchFilesOf(stateDir);
    await fs.mkdir(files.dir, { recursive: true });
    await fs.writeFile(files.attempts, '2\n');
    await fs.writeFile(files.rolledBack, '0.1.0-1\n');
    await fs.writeFile(files.knownGood, '0.1.0-1\n');

    await recordCompletedReconcile(stateDir, '0.2.0-1');

    expect({ knownGood: await read(files.knownGood), attempts: await read(files.attempts), rolledBack: await read(files.rolledBack) })
      .toEqual({ knownGood: '0.2.0-1\n', attempts: null, rolledBack: null });
  });

  test('creates the launch folder on a machine whose launcher has not run yet', async () => {
    await recordCompletedReconcile(stateDir, '0.1.0-r0');

    expect(await read(path.join(stateDir, 'launch', 'known-good'))).toBe('0.1.0-r0\n');
  });

  test('leaves the halt file alone: only a person clears a halt', async () => {
    const files = launchFilesOf(stateDir);
    await fs.mkdir(files.dir, { recursive: true });
    await fs.writeFile(files.halted, 'reason=rolled-back-already\n');

    await recordCompletedReconcile(stateDir, '0.1.0-1');

    expect(await read(files.halted)).toBe('reason=rolled-back-already\n');
  });

  test('does not rewrite known-good when it already names the running version', async () => {
    const files = launchFilesOf(stateDir);
    await recordCompletedReconcile(stateDir, '0.1.0-1');
    const before = await fs.stat(files.knownGood);
    await fs.utimes(files.knownGood, new Date(1_000_000_000_000), new Date(1_000_000_000_000));

    await recordCompletedReconcile(stateDir, '0.1.0-1');

    const after = await fs.stat(files.knownGood);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(1_000_000_000_000);
  });

  test('says which file it could not write when the launch folder is read-only', async () => {
    if (process.getuid?.() === 0) {
      // root writes through a read-only mode; a file where the folder should be stops anyone.
      await fs.writeFile(path.join(stateDir, 'launch'), 'not a folder');
    } else {
      await fs.chmod(stateDir, 0o500);
    }

    const failure = await recordCompletedReconcile(stateDir, '0.1.0-1').catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(LaunchStateUnwritable);
    expect((failure as LaunchStateUnwritable).value).toBe(launchFilesOf(stateDir).knownGood);
  });
});

describe('runningPackageVersion', () => {
  test('is the program version in a checkout, which came in no package', () => {
    expect(runningPackageVersion()).toBe(runningVersion());
  });
});
