import { AsyncLocalStorage } from 'node:async_hooks';

/** The store whose transaction the current async call chain is inside, if any. */
const inside = new AsyncLocalStorage<object>();

/**
 * Runs a transaction's function marked as inside `store`'s transaction, so a call to the store
 * itself from within it can be caught by {@link assertOutsideTransaction}.
 */
export function runInsideTransaction<R>(store: object, fn: () => Promise<R>): Promise<R> {
  return inside.run(store, fn);
}

/**
 * Refuses a statement sent to the store itself from inside one of its own transactions. On
 * PGlite it would wait for the transaction to end, which waits for it: a silent hang. On
 * PostgreSQL it would run on another connection, outside the transaction, and commit on its
 * own. Either is a mistake in the calling code; the function is given `tx` for this.
 */
export function assertOutsideTransaction(store: object): void {
  if (inside.getStore() === store) {
    throw new Error('a statement was sent to the store from inside its own transaction: use the `tx` given to the transaction function');
  }
}
