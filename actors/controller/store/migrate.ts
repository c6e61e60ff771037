import { MigrationChanged, MigrationFailed, MigrationMissing, MigrationOutOfOrder } from './migration-errors';
import { readMigrationFiles, type MigrationFile } from './migration-files';
import type { Sql, SqlStore } from './sql-store';

/** What a call to {@link migrate} did. */
export interface MigrateResult {
  /** The files applied by this call, in order; empty when the store was up to date. */
  applied: string[];
  /** The newest migration the store now has, or null when there are none at all. */
  latest: string | null;
}

/** An applied migration as `schema_migrations` records it. */
interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
  applied_at: Date;
}

// pg_advisory_xact_lock(key1, key2): 'novx' as an int4, then 1 for "schema migrations".
const LOCK = 'SELECT pg_advisory_xact_lock(1852798584, 1)';

const CREATE_TABLE = `
CREATE TABLE schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL UNIQUE,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Brings the store's schema up to the migrations folder: each file not yet applied runs in its
 * own transaction, in order of number, and is recorded in `schema_migrations` with its checksum
 * in that same transaction, so a file is either wholly applied and recorded or not at all.
 *
 * Every transaction first takes one advisory lock and reads what is applied under it, so two
 * controllers starting together against PostgreSQL apply each file once: the second waits, then
 * finds it done. Before applying anything it refuses a store whose applied migrations are not
 * the files it has: one changed or renamed (MigrationChanged), one gone (MigrationMissing), or a
 * new one numbered below an applied one (MigrationOutOfOrder). Forward-only: nothing is undone.
 */
export async function migrate(store: SqlStore, options: { dir?: string } = {}): Promise<MigrateResult> {
  const files = await readMigrationFiles(options.dir);
  const applied: string[] = [];
  for (;;) {
    const step = await store.transaction(async (tx) => {
      await tx.query(LOCK);
      const rows = await appliedMigrations(tx);
      const pending = nextPending(files, rows);
      if (pending === undefined) return { done: true as const, latest: rows.at(-1)?.name ?? null };
      try {
        await tx.exec(pending.sql);
      } catch (error) {
        throw new MigrationFailed(pending.name, error);
      }
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [pending.version, pending.name, pending.checksum]);
      return { done: false as const, name: pending.name };
    });
    if (step.done) return { applied, latest: step.latest };
    applied.push(step.name);
  }
}

/** The applied migrations, oldest first; creates the record table on a new store. */
async function appliedMigrations(tx: Sql): Promise<AppliedRow[]> {
  const [found] = await tx.query<{ table: string | null }>("SELECT to_regclass('schema_migrations')::text AS table");
  if (found?.table == null) {
    await tx.exec(CREATE_TABLE);
    return [];
  }
  return tx.query<AppliedRow>('SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version');
}

/** The first file not yet applied, after checking that what is applied is what the folder holds. */
function nextPending(files: readonly MigrationFile[], rows: readonly AppliedRow[]): MigrationFile | undefined {
  const byVersion = new Map(files.map((file) => [file.version, file]));
  for (const row of rows) {
    const file = byVersion.get(row.version);
    if (file === undefined) throw new MigrationMissing({ file: row.name, appliedAt: row.applied_at });
    if (file.name !== row.name) {
      throw new MigrationChanged({ file: file.name, appliedAs: row.name, appliedAt: row.applied_at, problem: `it was renamed from ${row.name}` });
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationChanged({
        file: file.name,
        appliedAs: row.name,
        appliedAt: row.applied_at,
        problem: `its SHA-256 was ${row.checksum.slice(0, 12)}… when applied and is ${file.checksum.slice(0, 12)}… now`,
      });
    }
  }
  const appliedVersions = new Set(rows.map((row) => row.version));
  const latest = rows.at(-1);
  const pending = files.filter((file) => !appliedVersions.has(file.version));
  const early = latest === undefined ? undefined : pending.find((file) => file.version < latest.version);
  if (early !== undefined && latest !== undefined) throw new MigrationOutOfOrder({ file: early.name, latestApplied: latest.name });
  return pending[0];
}
