import { PackageDatabaseLocked, PackageInstallFailed, PackageNotInRepository } from './package-errors';
import { packageFailures } from './package-failures';

const refused = {
  name: 'nginx',
  version: '1.24.0-1',
  result: { argv: ['apt-get', 'install'], code: 100, signal: null, stdout: 'Reading package lists...\n', stderr: 'E: Unable to locate package nginx\n', timedOut: false, durationMs: 5 },
  program: 'apt-get',
  source: "apt/dpkg (the machine's apt sources)",
};

describe('packageFailures', () => {
  test('every condition quotes the package manager\'s first error line and names the program that said it', () => {
    const failures = packageFailures(refused);

    for (const failure of [
      failures.locked('/var/lib/dpkg', 'wait'),
      failures.notInRepository('publish it'),
      failures.installFailed('repair it'),
      failures.runByHand('apt-get install nginx=1.24.0-1'),
    ]) {
      expect(failure.said).toBe('E: Unable to locate package nginx');
      expect(failure.message).toContain('(apt-get said: E: Unable to locate package nginx)');
    }
  });

  test('each condition is its own class, and only a held lock is retryable', () => {
    const failures = packageFailures(refused);

    expect(failures.locked('/var/lib/dpkg', 'wait')).toBeInstanceOf(PackageDatabaseLocked);
    expect(failures.locked('/var/lib/dpkg', 'wait').retryable).toBe(true);
    expect(failures.notInRepository('publish it')).toBeInstanceOf(PackageNotInRepository);
    expect(failures.notInRepository('publish it').message).toContain("of apt/dpkg (the machine's apt sources)");
    expect(failures.installFailed('repair it')).toBeInstanceOf(PackageInstallFailed);
    expect(failures.installFailed('repair it').retryable).toBe(false);
  });

  test('a failure it cannot name says to run the command by hand, and that the host tries again', () => {
    const failure = packageFailures(refused).runByHand('apt-get install nginx=1.24.0-1');

    expect(failure).toBeInstanceOf(PackageInstallFailed);
    expect(failure.next).toBe('run "apt-get install nginx=1.24.0-1" on the machine to see the whole output and fix what it says; the host tries again at its next apply');
  });
});
