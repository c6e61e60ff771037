import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { writeFileAtomic } from '../../shared/fs/atomic-write';

/**
 * The flag that says the host has installed a new version of itself, and that new binary ran:
 * `<state-dir>/restart-due`, one line for a person saying what was installed. Its presence is
 * the whole signal.
 *
 * The package applier sets it after the new binary answered `version`. The run loop reads it
 * once a pass has been reported and then exits 0, so the launcher starts the new binary (seed
 * 000, "The restart": it stops by finishing, never half way through an apply). The run loop
 * clears it when it starts, so a flag left by a host that died before exiting cannot make the
 * new host exit after its own first pass.
 */
export const RESTART_DUE_FILE = 'restart-due';

/** Sets the flag, saying what was installed (`nox-mesh-host 0.2.0, package 0.2.0-1`). */
export async function markRestartDue(stateDir: string, installed: string): Promise<void> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(path.join(stateDir, RESTART_DUE_FILE), `${installed.split('\n')[0]}\n`, 0o644);
}

/** What the flag says was installed, or undefined when no restart is due. */
export async function readRestartDue(stateDir: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(path.join(stateDir, RESTART_DUE_FILE), 'utf8')).split('\n')[0];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes the flag (no error when there is none). */
export async function clearRestartDue(stateDir: string): Promise<void> {
  await fs.rm(path.join(stateDir, RESTART_DUE_FILE), { force: true });
}
