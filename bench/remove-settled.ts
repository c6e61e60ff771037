import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';

/**
 * Removes a run's tree and waits until the removal is on disk (`sync`), so the next timed run
 * does not pay for it. Removing 1,000 files leaves their deletion, and with the `discard` mount
 * option a TRIM of their blocks, in the file system's running journal transaction; the next
 * tool to sync a file waits for that commit. Measured here: an apply of 1,000 files right after
 * such a removal took 0.79–0.85 s, after the removal was synced 0.46–0.56 s. The clean-up is the
 * benchmark's work, not the measured tool's, so every tool gets it out of the way first.
 */
export async function removeSettled(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await syncDisks();
}

/** Waits until everything written so far is on disk (`sync`): before a section's first timed run. */
export function syncDisks(): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sync = spawn('sync', [], { stdio: 'ignore' });
    sync.once('error', reject);
    sync.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`sync exited with ${code}`))));
  });
}
