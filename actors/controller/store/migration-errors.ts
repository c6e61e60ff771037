import { OperatorError } from '../../shared/operator-error';

const UPGRADE_OR_RESTORE = 'run the mesh-control release that last started on this store (or a newer one), whose migrations folder has every file the store has applied';

/** The folder of migrations is not there: a broken installation, not a broken store. */
export class MigrationsFolderMissing extends OperatorError {
  constructor(dir: string) {
    super('the folder of store migrations is missing', { value: dir, next: 'reinstall mesh-control; its migrations/ folder must sit where it was installed' });
  }
}

/** A `.sql` file in the migrations folder is not named `NNNN_name.sql`, so its place in the order is unknown. */
export class MigrationFileNameInvalid extends OperatorError {
  constructor(file: string) {
    super('a migration file is not named NNNN_name.sql (four digits, then lowercase words joined by _)', {
      value: file,
      next: 'rename it to the next free number, e.g. 0006_add_thing.sql, or move it out of the migrations folder',
    });
  }
}

/** Two files in the migrations folder share one number. */
export class MigrationVersionDuplicate extends OperatorError {
  constructor(first: string, second: string) {
    super(`two migration files have the same number: ${first} and ${second}`, {
      value: second,
      next: `renumber the one not yet released to the next free number (never one a store has already applied)`,
    });
  }
}

/**
 * A migration the store has applied no longer reads as it did: edited, renamed or replaced.
 * Migrations are forward-only, so the store cannot follow the change.
 */
export class MigrationChanged extends OperatorError {
  readonly file: string;
  constructor(details: { file: string; appliedAs: string; appliedAt: Date; problem: string }) {
    super(`migration ${details.file} differs from the one this store applied as ${details.appliedAs} on ${details.appliedAt.toISOString()} (${details.problem})`, {
      value: details.file,
      next: `put ${details.appliedAs} back as it was when applied (e.g. git checkout migrations/${details.appliedAs}) and make the change as a new numbered migration: migrations are forward-only`,
    });
    this.file = details.file;
  }
}

/**
 * The store has applied a migration this mesh-control does not have: most often an older
 * mesh-control started on a store a newer one has upgraded.
 */
export class MigrationMissing extends OperatorError {
  readonly file: string;
  constructor(details: { file: string; appliedAt: Date }) {
    super(`the store has applied migration ${details.file} (on ${details.appliedAt.toISOString()}) and this mesh-control has no such file: the store is newer than this program`, {
      value: details.file,
      next: UPGRADE_OR_RESTORE,
    });
    this.file = details.file;
  }
}

/**
 * A migration not yet applied is numbered below one the store has applied: it was added out
 * of order, and applying it now would run it against a schema its author never saw.
 */
export class MigrationOutOfOrder extends OperatorError {
  readonly file: string;
  constructor(details: { file: string; latestApplied: string }) {
    super(`migration ${details.file} is not applied, yet the store has already applied the later ${details.latestApplied}`, {
      value: details.file,
      next: `renumber ${details.file} after ${details.latestApplied} (the next free number) and start again`,
    });
    this.file = details.file;
  }
}

/** A migration's SQL failed. Its transaction was rolled back, so the store is as it was before it. */
export class MigrationFailed extends OperatorError {
  readonly file: string;
  constructor(file: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`migration ${file} failed and was rolled back: ${reason}`, {
      value: file,
      next: 'nothing of it was applied; fix the migration (if it is yours) or report this with the message above, then start again',
      cause,
    });
    this.file = file;
  }
}
