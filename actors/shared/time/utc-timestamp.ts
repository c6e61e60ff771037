const DAY_MS = 86_400_000;

/**
 * `time` as `Date.prototype.toISOString` writes it (`2026-12-01T19:47:36.312Z`), worked out from
 * its milliseconds alone. V8's own formatting, even of UTC, first sets up the local time zone
 * through ICU, which pages in about 1 MB of the Node binary's time-zone data that a host then
 * holds for as long as it runs, for nothing: every time the mesh writes is UTC. Years outside
 * 0000–9999, which toISOString writes with six digits and a sign, are left to it; an invalid
 * date throws the same RangeError it does.
 */
export function utcTimestamp(time: Date | number): string {
  const ms = typeof time === 'number' ? time : time.getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`Invalid time value: ${String(ms)}`);
  const days = Math.floor(ms / DAY_MS);
  const { year, month, day } = civilFromDays(days);
  // eslint-disable-next-line no-restricted-properties -- a year no host clock reaches
  if (year < 0 || year > 9999) return new Date(ms).toISOString();
  const inDay = ms - days * DAY_MS;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`;
}

/** The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** {@link utcTimestamp} of `time`, or null for none. */
export function timestampOrNull(time: Date | null): string | null {
  return time === null ? null : utcTimestamp(time);
}
