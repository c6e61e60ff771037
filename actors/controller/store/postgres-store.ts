import { Pool, types, type CustomTypesConfig, type PoolClient } from 'pg';
import { assertOutsideTransaction, runInsideTransaction } from './outside-transaction';
import { parseInt8 } from './parse-int8';
import type { Sql, SqlStore } from './sql-store';
import { StoreUnreachable, StoreUrlInvalid } from './store-errors';

// PostgreSQL type oids: int8 and int8[].
const INT8 = 20;
const INT8_ARRAY = 1016;

/** How a PostgreSQL store is opened. */
export interface PostgresStoreOptions {
  /** Most connections held at once. 10 unless given. */
  maxConnections?: number;
  /** How long to wait for a connection (a new one, or a free one from the pool). 10 s unless given. */
  connectTimeoutMs?: number;
}

/**
 * The store on a PostgreSQL server, for fleets and for several controllers behind the lease:
 * a connection pool from a `postgres://` URL. Values come back as PGlite returns them (see
 * {@link SqlStore}); the type parsers are this pool's own, so other users of `pg` in the
 * process are not changed.
 */
export class PostgresStore implements SqlStore {
  readonly kind = 'postgres' as const;
  readonly #pool: Pool;
  #closing: Promise<void> | undefined;

  private constructor(pool: Pool) {
    this.#pool = pool;
  }

  /** Opens a pool on `url` and checks that the server answers, so a wrong URL fails at start. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    if (!/^postgres(ql)?:\/\//.test(url)) throw new StoreUrlInvalid(url);
    // A bounded wait, so a server behind a firewall that drops packets fails the start instead of hanging it.
    const pool = new Pool({ connectionString: url, max: options.maxConnections ?? 10, connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000, types: storeTypes });
    // An idle connection the server drops (a restart, a failover) is discarded by the pool and
    // replaced on the next checkout, where the failing statement tells its caller. Without a
    // listener the dropped connection's error would end the process.
    pool.on('error', () => undefined);
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end();
      throw new StoreUnreachable(url, error);
    }
    return new PostgresStore(pool);
  }

  async query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    assertOutsideTransaction(this);
    return (await this.#pool.query(sql, params as unknown[])).rows as T[];
  }

  async exec(script: string): Promise<void> {
    assertOutsideTransaction(this);
    // Without parameters node-postgres uses the simple query protocol, which runs several statements.
    await this.#pool.query(script);
  }

  async transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R> {
    assertOutsideTransaction(this);
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
    } catch (error) {
      client.release(error as Error); // the pool discards a connection released with an error
      throw error;
    }
    try {
      const result = await runInsideTransaction(this, () => fn(clientSql(client)));
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
        client.release();
      } catch (rollbackError) {
        // The connection is in an unknown state: have the pool throw it away.
        client.release(rollbackError as Error);
      }
      throw error;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }
}

function clientSql(client: PoolClient): Sql {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return (await client.query(sql, params as unknown[])).rows as T[];
    },
    async exec(script: string): Promise<void> {
      await client.query(script);
    },
  };
}

// pg-types declares its oids as a closed enum; int8[] is a built-in it parses all the same.
const builtinParser = types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
const defaultInt8Array = builtinParser(INT8_ARRAY, 'text');

function parseInt8Array(text: string): unknown {
  const toNumbers = (value: unknown): unknown => (Array.isArray(value) ? value.map(toNumbers) : typeof value === 'string' ? parseInt8(value) : value);
  return toNumbers(defaultInt8Array(text));
}

const storeTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === undefined || format === 'text') {
      if (oid === INT8) return parseInt8;
      if (oid === INT8_ARRAY) return parseInt8Array;
    }
    return builtinParser(oid, format);
  }) as CustomTypesConfig['getTypeParser'],
};
