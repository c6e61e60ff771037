import { TokenTtlInvalid } from './token-errors';

/** A token lives 15 minutes unless told otherwise: long enough to carry it to the machine. */
export const DEFAULT_TOKEN_TTL_MS = 15 * 60_000;
/** The shortest a token may live. */
export const MIN_TOKEN_TTL_MS = 60_000;
/** The longest: a token is carried by hand, not kept. */
export const MAX_TOKEN_TTL_MS = 7 * 24 * 3_600_000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Reads `--ttl`: a whole number and one unit, `30s`, `15m`, `2h`, `1d`, between 1m and 7d.
 * Anything else is refused (TokenTtlInvalid) rather than rounded into range.
 */
export function parseTtl(text: string): number {
  const match = /^(\d{1,9})([smhd])$/.exec(text.trim());
  if (match === null) throw new TokenTtlInvalid(text, 'is not a duration like 30s, 15m, 2h or 1d');
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (ms < MIN_TOKEN_TTL_MS) throw new TokenTtlInvalid(text, 'is shorter than 1 minute, too short to carry the token to the machine');
  if (ms > MAX_TOKEN_TTL_MS) throw new TokenTtlInvalid(text, 'is longer than 7 days; a token is carried by hand and used, not kept');
  return ms;
}
