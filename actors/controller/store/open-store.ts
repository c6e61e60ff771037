import path from 'node:path';
import { migrate, type MigrateResult } from './migrate';
import { PgliteStore } from './pglite-store';
import { PostgresStore } from './postgres-store';
import type { SqlStore } from './sql-store';

/**
 * Where the controller keeps its records: `{ dir }` for the embedded store in `<dir>/store`
 * (the default, for a one-machine mesh), `{ url }` for a PostgreSQL server (fleets, and several
 * controllers behind the lease).
 */
export type StoreLocation = { dir: string; url?: undefined } | { url: string; dir?: undefined };

/** How {@link openStore} should open the store. */
export interface OpenStoreOptions {
  /** The migrations folder; the project's migrations/ unless given. */
  migrationsDir?: string;
  /** Told what migrating did, for `mesh-control init` to say which migrations it applied. */
  onMigrated?: (result: MigrateResult) => void;
}

/** The embedded store's data directory inside the controller's directory. */
export function embeddedStoreDir(dir: string): string {
  return path.join(dir, 'store');
}

/**
 * Opens the controller's store and brings its schema up to date before anything else reads it.
 * A store whose migrations do not match this program's is closed again and the refusal thrown
 * (see `migrate`), so a controller never runs on a schema it does not know.
 */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<SqlStore> {
  const store: SqlStore = location.url !== undefined ? await PostgresStore.open(location.url) : await PgliteStore.open(embeddedStoreDir(location.dir));
  try {
    const result = await migrate(store, { dir: options.migrationsDir });
    options.onMigrated?.(result);
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}
