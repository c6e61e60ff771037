/**
 * How both stores read a PostgreSQL `bigint` (int8): a JS number while it is a safe integer,
 * which every count, epoch and sequence the controller keeps will be, and a JS `bigint` beyond
 * that, so a value is never silently rounded. node-postgres alone would return text and PGlite
 * already behaves like this; giving both this one function keeps them from drifting.
 */
export function parseInt8(text: string): number | bigint {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : BigInt(text);
}
