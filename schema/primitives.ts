import * as z from 'zod';

// The small value shapes every contract shares, so a node name or a digest is checked the
// same way in a declaration, a report and the host store.

/**
 * A point in time, ISO-8601 in UTC with seconds (`2026-08-27T14:02:00Z`), as
 * `Date.prototype.toISOString` writes it. Offsets are refused so two times compare as text.
 */
export const IsoTime = z.iso.datetime({
  // Left undefined for a missing value, so it reads "required" rather than a format complaint.
  error: (issue) => (issue.input === undefined ? undefined : 'expected an ISO-8601 UTC time like "2026-08-27T14:02:00Z"'),
});
/** See {@link IsoTime}. */
export type IsoTime = z.infer<typeof IsoTime>;

/**
 * A node's name: one DNS label (lowercase letters, digits, `-`; 1–63 characters; no `-` at
 * either end), so it can name a broker subject, an overlay host name and a database row alike.
 */
export const NodeName = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, {
    error: 'expected a node name: 1-63 lowercase letters, digits or "-", not starting or ending with "-"',
  });
/** See {@link NodeName}. */
export type NodeName = z.infer<typeof NodeName>;

/**
 * An absolute, normalized path: starts with `/`, has no `.`, `..` or empty segments and no
 * trailing `/`, no NUL. Normalized so one file has one resource key, and so a declared path
 * cannot climb out of where it says it is.
 */
export const AbsolutePath = z
  .string()
  .max(4095, { error: 'path is longer than 4095 characters' })
  .refine((path) => path.startsWith('/'), { error: 'expected an absolute path (starting with "/")', abort: true })
  .refine((path) => !path.includes('\0'), { error: 'a path must not contain a NUL byte', abort: true })
  .refine((path) => !path.split('/').includes('..'), { error: 'a path must not contain ".." segments', abort: true })
  .refine((path) => path === '/' || path.split('/').slice(1).every((segment) => segment !== '' && segment !== '.'), {
    error: 'expected a normalized path: no "//", no "." segments, no trailing "/"',
  });
/** See {@link AbsolutePath}. */
export type AbsolutePath = z.infer<typeof AbsolutePath>;

/** A SHA-256 digest as 64 lowercase hex digits: content digests, certificate fingerprints. */
export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: 'expected a SHA-256 digest: 64 lowercase hex digits' });
/** See {@link Sha256Hex}. */
export type Sha256Hex = z.infer<typeof Sha256Hex>;

/**
 * Exactly 32 bytes in standard padded base64 (44 characters): an Ed25519 public key or seed,
 * a WireGuard key. The last character before `=` is limited to those whose unused bits are
 * zero, so each key has one spelling.
 */
export const Base64Bytes32 = z
  .string()
  .regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/, { error: 'expected 32 bytes in base64 (44 characters ending in "=")' });
/** See {@link Base64Bytes32}. */
export type Base64Bytes32 = z.infer<typeof Base64Bytes32>;

/** A version of nox-mesh-host as it names itself (`0.1.0`, `1.2.0-rc.1`). */
export const HostVersion = z
  .string()
  .regex(/^[0-9A-Za-z][0-9A-Za-z.+~_-]{0,63}$/, { error: 'expected a version like "1.2.0"' });
/** See {@link HostVersion}. */
export type HostVersion = z.infer<typeof HostVersion>;

/** A count that starts at zero: epochs, sequences. Safe integers only, so JSON carries it exactly. */
export const Count = z.int().min(0, { error: 'must not be negative' });
/** See {@link Count}. */
export type Count = z.infer<typeof Count>;
