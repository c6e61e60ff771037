import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';

/**
 * Removes a run's tree and waits until the removal is on disk (`sync`), so the next timed run
 * never pays for writing out the benchmark's own clean-up, whichever tool it measures. Measured
 * here in alternation, a synced and an unsynced removal before an apply of 1,000 files made no
 * difference beyond the noise; what moves that figure is the disk itself (see bench/README.md).
 * Kept because a tool's figure should not depend on what ran before it.
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
