import { SilenceDurationInvalid } from './condition-errors';
import { SILENCE_MAX_MS } from './condition-store';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * Reads a silence's `--for`: a whole number and one unit, `30m`, `2h`, `3d`, `1w`, from one
 * minute to a week. Anything else is refused whole (SilenceDurationInvalid), never rounded into range.
 */
export function parseSilenceFor(text: string): number {
  const match = /^(\d{1,6})([mhdw])$/.exec(text.trim());
  if (match === null) throw new SilenceDurationInvalid(text, 'is not a duration like 30m, 2h, 3d or 1w');
  const ms = Number(match[1]) * (UNITS[match[2] as string] as number);
  if (ms < 60_000) throw new SilenceDurationInvalid(text, 'is shorter than a minute');
  if (ms > SILENCE_MAX_MS) throw new SilenceDurationInvalid(text, 'is longer than a week, the longest a condition may be silenced; silence it again when the week ends if it must still be left');
  return ms;
}
