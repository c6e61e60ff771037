import { SinceInvalid } from './hand-act-errors';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Reads a `--since` window: a whole number and one unit, `30m`, `6h`, `7d`, from 1m to
 * `maxMs` (said as `maxText`). Anything else is refused (SinceInvalid), never rounded into range.
 */
export function parseSince(text: string, maxMs: number, maxText: string): number {
  const match = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (match === null) throw new SinceInvalid(text, 'is not a duration like 30m, 6h or 7d', maxText);
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (ms < 60_000) throw new SinceInvalid(text, 'is shorter than 1 minute', maxText);
  if (ms > maxMs) throw new SinceInvalid(text, `is longer than ${maxText}, longer than what is kept`, maxText);
  return ms;
}
