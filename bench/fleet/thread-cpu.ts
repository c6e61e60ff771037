import { readFileSync } from 'node:fs';
import { clockTicksPerSecond, statLineTicks } from '../proc-stat';

/**
 * CPU time this process's main thread has used so far, user and system together, in seconds
 * (/proc/self/task/<pid>/stat). A simulated fleet runs every host's JavaScript on this one
 * thread, so its time bounds how soon the last node can report, while the process's time also
 * counts the thread pool's file system work, done beside it on the other cores. `statFile` is
 * the main thread's unless a test gives another.
 */
export function mainThreadCpuSeconds(statFile = `/proc/self/task/${process.pid}/stat`): number {
  return statLineTicks(readFileSync(statFile, 'utf8'), false) / clockTicksPerSecond();
}
