import { readMigrationFiles } from '../store/migration-files';
import type { Sql } from '../store/sql-store';
import { failed, passed, type DoctorProbe } from './doctor-probe';

/**
 * The store answers and is migrated: every file in the migrations folder is recorded in
 * `schema_migrations` with the checksum it has now. The store is only read: a doctor never
 * migrates (the serving controller does, at start).
 */
export function storeProbe(store: Sql, migrationsDir?: string): DoctorProbe {
  return {
    name: 'store',
    whenCannotRun: 'check that the store is reachable (PostgreSQL running, or the mesh directory\'s store/ readable), then run mesh-control doctor again',
    run: async () => {
      const files = await readMigrationFiles(migrationsDir);
      const [table] = await store.query<{ table: string | null }>("SELECT to_regclass('schema_migrations')::text AS table");
      if (table?.table == null) return failed(`the store answers but holds no migrations at all (${files.length} expected)`, 'start mesh-control serve --dir DIR, which migrates the store at start');
      const rows = await store.query<{ version: number; name: string; checksum: string }>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
      const applied = new Map(rows.map((row) => [Number(row.version), row]));
      const missing = files.filter((file) => !applied.has(file.version)).map((file) => file.name);
      const changed = files.filter((file) => applied.has(file.version) && applied.get(file.version)?.checksum !== file.checksum).map((file) => file.name);
      const known = new Set(files.map((file) => file.version));
      const unknown = rows.filter((row) => !known.has(Number(row.version))).map((row) => row.name);
      const wrong = [
        ...(missing.length === 0 ? [] : [`not applied: ${missing.join(', ')}`]),
        ...(changed.length === 0 ? [] : [`changed since applied: ${changed.join(', ')}`]),
        ...(unknown.length === 0 ? [] : [`applied but not in this program's migrations: ${unknown.join(', ')}`]),
      ];
      if (wrong.length > 0) {
        const next = missing.length > 0 && changed.length === 0 && unknown.length === 0
          ? 'restart mesh-control serve --dir DIR, which applies the missing migrations at start'
          : 'the store and this program disagree on its schema: run the mesh-control that made this store, or restore the migrations folder it was made with';
        return failed(`the store answers, and ${wrong.join('; ')}`, next);
      }
      return passed(`answers; all ${files.length} migrations applied (latest ${files.at(-1)?.name ?? 'none'})`);
    },
  };
}
