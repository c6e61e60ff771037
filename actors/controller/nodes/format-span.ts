/**
 * A length of time the way a person reads it at a glance, in the largest unit that keeps it a
 * whole number people use: `12 s`, `4 min`, `3 h`, `4 days`. Rounded down, so "1 min" is never
 * said of 59 seconds. Hours go up to 47 so that "1 days" is never said.
 */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} days`;
}
