import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestPostgres, type TestPostgres } from '../../../shared/testing/test-postgres';
import { openStore } from '../open-store';
import type { SqlStore, StoreKind } from '../sql-store';

/** Both stores, for `describe.each(STORE_KINDS)`. */
export const STORE_KINDS: readonly StoreKind[] = ['pglite', 'postgres'];

/** A migrated store for one describe block, and what it runs on. */
export interface TestStore {
  /** The open store; valid between the block's beforeAll and afterAll. */
  readonly store: SqlStore;
  /** The PostgreSQL server behind a `postgres` store (undefined for PGlite). */
  readonly postgres: TestPostgres | undefined;
  /** The controller directory behind a `pglite` store (undefined for PostgreSQL). */
  readonly dir: string | undefined;
}

/**
 * Opens one migrated store of `kind` for the enclosing describe block (beforeAll) and closes
 * and removes it afterwards (afterAll): a PGlite store in a temporary directory, or a database
 * on a private PostgreSQL started for the block. One per block, because a new PGlite store
 * takes seconds to create; tests in the block use their own names and ids to stay apart.
 */
export function useTestStore(kind: StoreKind): TestStore {
  let store: SqlStore | undefined;
  let postgres: TestPostgres | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    if (kind === 'postgres') {
      postgres = await startTestPostgres();
      store = await openStore({ url: postgres.url });
    } else {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-store-'));
      store = await openStore({ dir });
    }
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await postgres?.stop();
    if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
  });
  return {
    get store(): SqlStore {
      if (store === undefined) throw new Error('the test store is open only inside the describe block that asked for it');
      return store;
    },
    get postgres() {
      return postgres;
    },
    get dir() {
      return dir;
    },
  };
}
