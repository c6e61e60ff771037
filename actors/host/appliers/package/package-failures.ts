import type { RunResult } from '../../../shared/process/command-runner';
import { lastWords } from './last-words';
import { PackageDatabaseLocked, PackageInstallFailed, PackageNotInRepository, type PackageFailureDetails } from './package-errors';

/** The package change that failed, and what the package manager answered. */
export interface RefusedChange {
  name: string;
  version: string | undefined;
  /** The run that failed: its last words are what every failure quotes. */
  result: RunResult;
  /** The program named as having said them (`apt-get`, `pacman`, `apk`). */
  program: string;
  /** The backend's own description (`describe()`), for a package no repository has. */
  source: string;
}

/**
 * The failures a refused package change can be reported as, each already carrying the package
 * manager's last words and the program that said them. A backend reads its manager's output to
 * pick one; what stays its own is which condition that output shows and the next step.
 */
export function packageFailures(change: RefusedChange): {
  /** Another process holds the lock on `database`: nothing changed, and the apply may work later. */
  locked(database: string, next: string): PackageDatabaseLocked;
  /** No repository the manager reads has the package, or not that version. */
  notInRepository(next: string): PackageNotInRepository;
  /** Failed for a reason the backend recognised and can name the next step for. */
  installFailed(next: string): PackageInstallFailed;
  /** Failed for any other reason: a person runs `command` on the machine to see all it says. */
  runByHand(command: string): PackageInstallFailed;
} {
  const { name, version, result, program, source } = change;
  const details = (next: string): PackageFailureDetails => ({ said: lastWords(result), program, next });
  return {
    locked: (database, next) => new PackageDatabaseLocked(database, details(next)),
    notInRepository: (next) => new PackageNotInRepository(name, version, source, details(next)),
    installFailed: (next) => new PackageInstallFailed(name, version, details(next)),
    runByHand: (command) =>
      new PackageInstallFailed(name, version, details(`run "${command}" on the machine to see the whole output and fix what it says; the host tries again at its next apply`)),
  };
}
