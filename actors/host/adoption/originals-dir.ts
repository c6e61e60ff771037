import { createHash } from 'node:crypto';
import path from 'node:path';

/** The folder under the state directory that holds every kept original. */
export const ORIGINALS_DIR = 'originals';

// Well under NAME_MAX (255 bytes): the appliers add names of their own below it.
const MAX_NAME = 200;
const DIGEST_CHARS = 16;
const KEPT_AS_IS = /^[A-Za-z0-9._:@+=,-]$/;

/**
 * Where adoption keeps the machine's original of one resource:
 * `<stateDir>/originals/<the key as a file name>`, e.g.
 * `/var/lib/mesh-host/originals/file:%2Fetc%2Fdocker%2Fdaemon.json`.
 */
export function originalsDirFor(stateDir: string, key: string): string {
  return path.join(path.resolve(stateDir), ORIGINALS_DIR, keyAsFileName(key));
}

/**
 * A resource key as one file name, different for every key: every byte outside a small safe
 * set (`/` above all) is percent-encoded, so `file:/a_b` and `file:/a/b` stay apart and a
 * person can still read which resource a folder holds. A name that would be too long keeps its
 * beginning and ends in `~` and a digest of the whole key (`~` is otherwise always encoded, so
 * a shortened name never equals a whole one).
 */
export function keyAsFileName(key: string): string {
  let name = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const char = String.fromCharCode(byte);
    name += byte < 0x80 && KEPT_AS_IS.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (name.length <= MAX_NAME) return name;
  const digest = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, DIGEST_CHARS);
  return `${name.slice(0, MAX_NAME - DIGEST_CHARS - 1)}~${digest}`;
}
