import { readFileSync } from 'node:fs';
import { clockTicksPerSecond } from '../proc-stat';

/**
 * CPU time this process's main thread has used so far, user and system together, in seconds
 * (/proc/self/task/<pid>/stat). A simulated fleet runs every host's JavaScript on this one
 * thread, so its time bounds how soon the last node can report, while the process's time also
 * counts the thread pool's file system work, done beside it on the other cores.
 */
export function mainThreadCpuSeconds(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // afterName[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(afterName[11]);
  const stime = Number(afterName[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`/proc/self/task/${process.pid}/stat could not be read: ${stat.slice(0, 120)}`);
  return (utime + stime) / clockTicksPerSecond();
}
