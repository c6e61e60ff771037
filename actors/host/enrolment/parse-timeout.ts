import { OperatorError } from '../../shared/operator-error';

/** A timeout option that is not a duration. */
export class TimeoutInvalid extends OperatorError {
  constructor(text: string) {
    super('expected a duration like 30s, 2m or 500ms', { value: text, next: 'give --timeout a whole number with ms, s or m after it (default 30s)' });
  }
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** Milliseconds from `30s`, `2m`, `500ms` (a bare number is seconds); at least one, at most an hour. */
export function parseTimeout(text: string): number {
  const match = /^\s*(\d{1,7})\s*(ms|s|m)?\s*$/.exec(text);
  if (match === null) throw new TimeoutInvalid(text);
  const ms = Number(match[1]) * (UNIT_MS[match[2] ?? 's'] as number);
  if (ms < 1 || ms > 3_600_000) throw new TimeoutInvalid(text);
  return ms;
}
