/**
 * The statements the controller runs, and nothing else. Both stores speak the one SQL dialect
 * that PostgreSQL 15 and PGlite (PostgreSQL 18 in WebAssembly) share: `$1` parameters, `jsonb`,
 * `timestamptz`, `bigint`, `INSERT … ON CONFLICT`, `SELECT … FOR UPDATE`.
 *
 * Values come back the same from both: `bigint` as a JS number when it is a safe integer (a
 * JS `bigint` beyond, never a rounded number), `timestamptz` as a Date, `jsonb` parsed, `numeric`
 * as text. Avoid `bytea` and `date` columns: the two drivers return them differently.
 *
 * Pass a `jsonb` parameter as JSON text (`JSON.stringify(value)`): node-postgres turns a JS
 * array parameter into a PostgreSQL array literal, which is not JSON, while text means the same
 * to both drivers. Errors from the database carry PostgreSQL's SQLSTATE in `code` on both.
 */
export interface Sql {
  /** Runs one statement with `$1…` parameters and returns its rows (none for a statement without RETURNING). */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (a migration). Returns no rows. */
  exec(script: string): Promise<void>;
}

/**
 * A store the controller holds open for its lifetime: PGlite in a data directory, or a
 * PostgreSQL pool. Repository functions take an {@link Sql} so that they run alike on the
 * store itself or inside a transaction.
 */
export interface SqlStore extends Sql {
  /** `pglite` (embedded, one process) or `postgres` (a server, several controllers). */
  readonly kind: StoreKind;
  /**
   * Runs `fn` in one transaction (READ COMMITTED, as PostgreSQL defaults): committed when it
   * resolves, rolled back when it throws, and the error passed on. Inside `fn` use only `tx`:
   * a statement or transaction sent to the store itself from inside is refused with an Error
   * (on PGlite it would wait for ever, on PostgreSQL it would escape the transaction).
   */
  transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R>;
  /** Closes the store; pending work finishes first. Calling it again does nothing. */
  close(): Promise<void>;
}

/** Which engine holds the controller's records. */
export type StoreKind = 'pglite' | 'postgres';
