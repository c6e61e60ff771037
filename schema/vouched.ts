import type * as z from 'zod';

/**
 * Values a contract's parse has just produced, remembered by the object with the schema that
 * produced it and the value's JSON then. A check that would parse such a value again with the
 * same schema (the host store's checker, writing hand-applied resources the declaration's parse
 * gave) takes it as passed instead, when its JSON is still the same: a value changed in place
 * since is parsed as any other. Sound because the contract's schemas have no transforms, so
 * what a parse gives parses to itself.
 */
const vouched = new WeakMap<object, { schema: z.ZodType; json: string }>();

/** Remembers each of `values`, which a parse with `schema` (or of a list of it) just gave. */
export function vouchParsed(schema: z.ZodType, values: readonly object[]): void {
  for (const value of values) vouched.set(value, { schema, json: JSON.stringify(value) });
}

/** The schema whose parse gave `value`, when its JSON is still `json`; undefined otherwise. */
export function vouchedSchemaOf(value: unknown, json: string): z.ZodType | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const seen = vouched.get(value);
  return seen !== undefined && seen.json === json ? seen.schema : undefined;
}
