import { readFileSync } from 'node:fs';
import { ApplyFailed } from '../appliers/applier';

/**
 * What adoption recorded of a file's or directory's original beside the kept copy
 * (`<copy>.meta.json`): the mode, owner and time to put back with it.
 */
export interface KeptRecord {
  mode: number;
  uid: number;
  gid: number;
  /** The original's modification time, when the record has a readable one. */
  mtime?: Date;
}

/**
 * Reads a kept original's record for handing it back. A record that cannot be read or does not
 * hold a mode and an owner is refused (ApplyFailed naming it): putting the content back with a
 * guessed mode or owner could open a private file to everyone, so the original then stays kept
 * and the person reading the report puts it back by hand.
 */
export function readKeptRecord(file: string, keptAt: string): KeptRecord {
  let record: unknown;
  try {
    record = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ApplyFailed(`${unreadable(file, keptAt)}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const { mode, uid, gid, mtime } = (typeof record === 'object' && record !== null ? record : {}) as Record<string, unknown>;
  if (typeof mode !== 'string' || !/^[0-7]{3,4}$/.test(mode) || !isId(uid) || !isId(gid)) {
    throw new ApplyFailed(`${unreadable(file, keptAt)}: it does not hold a mode like "0644" and a numeric owner and group`);
  }
  const time = typeof mtime === 'string' ? new Date(mtime) : undefined;
  return { mode: Number.parseInt(mode, 8), uid, gid, ...(time === undefined || Number.isNaN(time.getTime()) ? {} : { mtime: time }) };
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function unreadable(file: string, keptAt: string): string {
  return `the record of the kept original at ${file} is unreadable, so the original stays kept at ${keptAt}; put it back by hand`;
}
