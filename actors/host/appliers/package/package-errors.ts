import { ApplyFailed } from '../applier';

// Why a package could not be installed, one class per condition, so the host and tests can
// tell them apart with instanceof. Each carries the package manager's own last words (what a
// person would have seen at the terminal) and the next step, and says whether the same apply
// may work later without anyone doing anything.

/** The parts every package failure is made of. */
export interface PackageFailureDetails {
  /** The package manager's own last lines, as {@link lastWords} picks them. */
  said: string;
  /** The program that said it (`apt-get`, `pacman`, `apk`). */
  program: string;
  /** The next step for a person. */
  next: string;
  cause?: unknown;
}

/** A package change the machine refused. The message reads: what happened, what the package manager said, what to do. */
export class PackageChangeFailed extends ApplyFailed {
  /** What happened, in a sentence. */
  readonly what: string;
  /** The package manager's own words. */
  readonly said: string;
  /** The next step. */
  readonly next: string;
  /** True when the same apply may work later by itself (a lock held by another process). */
  readonly retryable: boolean;

  constructor(what: string, details: PackageFailureDetails, retryable = false) {
    super(`${what} (${details.program} said: ${details.said}); next: ${details.next}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.what = what;
    this.said = details.said;
    this.next = details.next;
    this.retryable = retryable;
  }
}

/** The repositories the package manager reads do not have the package, or not that version. */
export class PackageNotInRepository extends PackageChangeFailed {
  constructor(name: string, version: string | undefined, source: string, details: PackageFailureDetails) {
    super(`${describePackage(name, version)} is not in the repositories of ${source}`, details);
  }
}

/** Another process holds the package database's lock; nothing was changed. */
export class PackageDatabaseLocked extends PackageChangeFailed {
  constructor(database: string, details: PackageFailureDetails) {
    super(`the package database ${JSON.stringify(database)} is locked by another process, so nothing was installed`, details, true);
  }
}

/** The package manager ran and failed for another reason (a dependency, a held package, a broken database). */
export class PackageInstallFailed extends PackageChangeFailed {
  constructor(name: string, version: string | undefined, details: PackageFailureDetails) {
    super(`installing ${describePackage(name, version)} failed`, details);
  }
}

/**
 * The package database could not be read at all (missing, or the query program failed), so
 * whether the package is installed is unknown. Observation reports it as `unreadable`.
 */
export class PackageDatabaseUnreadable extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'PackageDatabaseUnreadable';
  }
}

/** `package "nginx"` or `package "nginx" version "1.24.0-1"`, for messages. */
export function describePackage(name: string, version: string | undefined): string {
  return version === undefined ? `package ${JSON.stringify(name)}` : `package ${JSON.stringify(name)} version ${JSON.stringify(version)}`;
}
