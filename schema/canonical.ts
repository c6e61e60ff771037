import * as crypto from 'node:crypto';

/**
 * Canonical JSON: object keys in JavaScript's default (UTF-16) sort order, no insignificant whitespace, `undefined`
 * members dropped. Two equal values always give the same bytes, which is what signatures and
 * content digests are computed over.
 *
 * Refuses values JSON cannot carry faithfully (non-finite numbers, functions, bigints), rather
 * than signing something that would read back different.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '$');
}

/** The canonical bytes of a value, UTF-8. */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}

/** Lower-case hex SHA-256 of the canonical form: the content digest of any contract value. */
export function digestOf(value: unknown): string {
  // One call, not a Hash object per digest: a pass digests every resource it holds. Node
  // before 20.12 has no crypto.hash (the package allows any Node 20).
  const text = canonicalJson(value);
  return typeof crypto.hash === 'function' ? crypto.hash('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

function write(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot carry ${value} at ${path}`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item, i) => write(item ?? null, `${path}[${i}]`)).join(',')}]`;
      const entries = Object.keys(value as object)
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${write((value as Record<string, unknown>)[key], `${path}.${key}`)}`);
      return `{${entries.join(',')}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot carry a ${typeof value} at ${path}`);
  }
}
