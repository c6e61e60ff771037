import type { Declaration } from '../../../schema/declaration';

/**
 * Declarations this process has verified, by the envelope object it holds in memory, with the
 * key they verified against. The gate records what it admits, so the pass that follows does not
 * check the same signature again; what is read from the store's file is a new object, verified
 * when it is first asked for. An object in this process's memory does not change under it, and
 * a new declaration is a new object.
 */
const verified = new WeakMap<object, { key: string; declaration: Declaration }>();

/** Records that `envelope` verified against `key` and holds `declaration`. */
export function rememberVerified(envelope: object, key: string, declaration: Declaration): void {
  verified.set(envelope, { key, declaration });
}

/** The declaration `envelope` was verified to hold against `key`, when this process has verified it. */
export function verifiedBefore(envelope: unknown, key: string): Declaration | undefined {
  if (typeof envelope !== 'object' || envelope === null) return undefined;
  const known = verified.get(envelope);
  return known !== undefined && known.key === key ? known.declaration : undefined;
}
