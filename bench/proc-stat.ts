import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`), in which /proc/<pid>/stat counts CPU time. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const text = execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim();
    const value = Number(text);
    ticksPerSecond = Number.isInteger(value) && value > 0 ? value : 100;
  }
  return ticksPerSecond;
}

/** Resident memory of process `pid` in MB (VmRSS of /proc/<pid>/status; `proc` is /proc unless a test gives another). */
export function residentMb(pid: number, proc = '/proc'): number {
  const status = readFileSync(`${proc}/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`/proc/${pid}/status has no VmRSS line: the process has ended`);
  return Number(match[1]) / 1024;
}

/**
 * CPU time process `pid` has used so far, user and system together, in seconds (fields 14 and
 * 15 of /proc/<pid>/stat, after the command name, which may itself hold spaces and brackets).
 */
export function cpuSeconds(pid: number, proc = '/proc'): number {
  return statTicks(pid, false, proc) / clockTicksPerSecond();
}

/**
 * CPU time of process `pid`, of its children that have ended (and that it has waited for), and
 * of its children alive now, in seconds: a PostgreSQL server is its postmaster and one backend
 * per connection. The ended children's time stays in the sum (fields 16 and 17, cutime and
 * cstime), so a backend that ends between two readings does not make the second one smaller.
 */
export function treeCpuSeconds(pid: number, proc = '/proc'): number {
  let total = statTicks(pid, true, proc) / clockTicksPerSecond();
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`${proc}/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) total += cpuSeconds(Number(entry), proc);
    } catch {
      // Ended while the list was read.
    }
  }
  return total;
}

/** utime + stime of /proc/<pid>/stat, and with `reaped` also cutime + cstime, in clock ticks. */
function statTicks(pid: number, reaped: boolean, proc: string): number {
  return statLineTicks(readFileSync(`${proc}/${pid}/stat`, 'utf8'), reaped);
}

/**
 * utime + stime of one /proc stat line (a process's or a thread's), and with `reaped` also
 * cutime + cstime, in clock ticks.
 */
export function statLineTicks(stat: string, reaped: boolean): number {
  // After the command name, which may itself hold spaces and brackets: afterName[0] is field 3
  // (state), so utime (field 14) is afterName[11], stime [12], cutime [13], cstime [14].
  const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const fields = (reaped ? [11, 12, 13, 14] : [11, 12]).map((index) => Number(afterName[index]));
  if (!fields.every(Number.isFinite)) throw new Error(`a /proc stat line could not be read: ${stat.slice(0, 120)}`);
  return fields.reduce((sum, ticks) => sum + ticks, 0);
}
