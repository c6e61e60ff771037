import { resolve } from 'node:path';

/**
 * True when `root` is the machine's own `/`. Package managers are then run exactly as a person
 * would run them, with none of the options that point them into a root.
 */
export function isMachineRoot(root: string): boolean {
  return resolve(root) === '/';
}
