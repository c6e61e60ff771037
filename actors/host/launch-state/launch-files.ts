import path from 'node:path';

/**
 * The launcher's files under `<state-dir>/launch/` (launcher/README.md is the contract): the
 * start counter, the version to roll back to, the marker of a roll back done, and the halt
 * file. The host writes `known-good` and removes `attempts` and `rolled-back`; the rest is the
 * launcher's.
 */
export interface LaunchFiles {
  dir: string;
  attempts: string;
  knownGood: string;
  rolledBack: string;
  halted: string;
}

/** The launcher's files for a state directory. */
export function launchFilesOf(stateDir: string): LaunchFiles {
  const dir = path.join(stateDir, 'launch');
  return {
    dir,
    attempts: path.join(dir, 'attempts'),
    knownGood: path.join(dir, 'known-good'),
    rolledBack: path.join(dir, 'rolled-back'),
    halted: path.join(dir, 'halted'),
  };
}
