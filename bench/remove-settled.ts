import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';

/**
 * Removes a tree the runs wrote and waits until the removal is on disk (`sync`): the runner
 * does it with a section's work directory when the section ends.
 *
 * Nothing is removed between timed runs: each run writes a fresh tree and leaves it. On an ext4
 * without a journal (the root file system of the virtual machines this benchmark has run on:
 * the results' `work_file_system` says), the inode allocator passes over every inode freed in
 * the last 60 s (360 s while its inode table block is unwritten) when it looks for a free one
 * (fs/ext4/ialloc.c, `recently_deleted`), so each file created after thousands were removed
 * costs a scan past them, in kernel time. Measured here: 1,000 files created in a fresh
 * directory in 0.03 s, and in 0.13 s to 1.2 s after runs that each removed the last 1,000,
 * rising with every run and recovering minutes later. Removing between runs measured the benchmark's own clean-up; a machine
 * applying its files has not just removed a thousand others.
 */
export async function removeSettled(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await syncDisks();
}

/** Waits until everything written so far is on disk (`sync`): before each timed run. */
export function syncDisks(): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sync = spawn('sync', [], { stdio: 'ignore' });
    sync.once('error', reject);
    sync.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`sync exited with ${code}`))));
  });
}
