import { randomBytes } from 'node:crypto';

/**
 * A new call id: the start time in base-36 milliseconds (nine digits, so ids sort by when their
 * calls started until the year 5188), a dash, and 32 random bits.
 */
export function newCallId(startedAt: Date): string {
  return `${startedAt.getTime().toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
}
