import { promises as fs } from 'node:fs';
import { lockEmbeddedStore } from './embedded-store-lock';
import { assertOutsideTransaction, runInsideTransaction } from './outside-transaction';
import { parseInt8 } from './parse-int8';
import type { Sql, SqlStore } from './sql-store';
import { StoreOpenFailed } from './store-errors';

// PostgreSQL type oids: int8; json and jsonb. (PGlite's own int8[] parser already reads its
// elements as parseInt8 does.)
const INT8 = 20;
const JSON_OID = 114;
const JSONB = 3802;

// Loaded on first use, so a controller on PostgreSQL never pays for the WebAssembly. The types
// are taken from the same import, since in a CommonJS project `import type` would resolve
// PGlite's separate CommonJS declarations, whose classes do not match these.
const loadPglite = () => import('@electric-sql/pglite');
type PGlite = InstanceType<Awaited<ReturnType<typeof loadPglite>>['PGlite']>;
type Transaction = Parameters<Parameters<PGlite['transaction']>[0]>[0];

/**
 * The embedded store: PGlite (PostgreSQL 18 compiled to WebAssembly) in a data directory, for a
 * one-machine mesh. One process, one connection: statements and transactions queue behind each
 * other, and the directory is locked against a second process.
 *
 * Creating a new store runs initdb inside WebAssembly: seconds, and close to a gigabyte of
 * memory while it lasts; reopening takes well under a second. Under jest it needs
 * `NODE_OPTIONS=--experimental-vm-modules` (PGlite loads parts of itself with `import()`).
 */
export class PgliteStore implements SqlStore {
  readonly kind = 'pglite' as const;
  readonly #db: PGlite;
  readonly #release: () => Promise<void>;
  #closing: Promise<void> | undefined;

  private constructor(db: PGlite, release: () => Promise<void>) {
    this.#db = db;
    this.#release = release;
  }

  /** Opens the store in `dataDir`, creating it when the directory is empty or absent. */
  static async open(dataDir: string): Promise<PgliteStore> {
    const release = await lockEmbeddedStore(dataDir);
    try {
      await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
      const { PGlite } = await loadPglite();
      let db: PGlite;
      try {
        db = await PGlite.create(dataDir, {
          parsers: { [INT8]: parseInt8 },
          serializers: { [JSON_OID]: serializeJson, [JSONB]: serializeJson },
        });
      } catch (error) {
        throw new StoreOpenFailed(dataDir, error);
      }
      return new PgliteStore(db, release);
    } catch (error) {
      await release();
      throw error;
    }
  }

  async query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    assertOutsideTransaction(this);
    return (await this.#db.query<T>(sql, params as unknown[])).rows;
  }

  async exec(script: string): Promise<void> {
    assertOutsideTransaction(this);
    await this.#db.exec(script);
  }

  async transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R> {
    assertOutsideTransaction(this);
    return this.#db.transaction((tx) => runInsideTransaction(this, () => fn(wrapTransaction(tx))));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.#db.close();
      } finally {
        await this.#release();
      }
    })();
    return this.#closing;
  }
}

function wrapTransaction(tx: Transaction): Sql {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return (await tx.query<T>(sql, params as unknown[])).rows;
    },
    async exec(script: string): Promise<void> {
      await tx.exec(script);
    },
  };
}

// JSON text is passed through as it is, the way node-postgres passes text, so one call site
// works on both stores; anything else is encoded.
function serializeJson(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
