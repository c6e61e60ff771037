import { readFileSync } from 'node:fs';

/**
 * True when no live process has this pid: none at all, or only a zombie waiting for whoever
 * inherited it to reap it (a zombie runs nothing and holds no pipe). Read from /proc, since
 * kill(pid, 0) succeeds on a zombie.
 */
export function processGone(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  // The state follows the command name, which is in parentheses and may itself hold spaces.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/**
 * Waits until {@link processGone} says so, or the deadline passes; true when it did. A signal
 * is delivered, and the process torn down, a little after kill() returns.
 */
export async function waitUntilGone(pid: number, deadlineMs = 10_000): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (!processGone(pid)) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Ends a process a test left running (SIGKILL), if it is still there. */
export function killLeftover(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
