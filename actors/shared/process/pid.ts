import * as fs from '../fs/promised-fs';

/** The pid written in a pid or lock file, or undefined when it is missing or not a pid. */
export async function readPidFile(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await fs.readFile(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when a process with this pid exists (one owned by another user counts). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
