import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../store/atomic-write';
import { OperatorError } from '../../shared/operator-error';

/** The pidfile's name in the state directory: where a rouse (SIGUSR1) finds the running host. */
export const PID_FILE = 'host.pid';

/** Another `nox-mesh-host run` is already running over this state directory. */
export class HostAlreadyRunning extends OperatorError {
  constructor(file: string, pid: number) {
    super(`another nox-mesh-host run (process ${pid}) is already running over this state directory; its pidfile`, {
      value: file,
      next: 'run one host per machine: stop the other one first (or the service: systemctl stop nox-mesh-host / rc-service nox-mesh-host stop)',
    });
  }
}

/** A claimed pidfile. */
export interface Pidfile {
  file: string;
  /** Removes the file if it still names this process. */
  release(): Promise<void>;
}

/**
 * Writes `<stateDir>/host.pid` with this process's id, refusing when a live process already
 * holds it (one host per state directory); a file left by a process that is gone is replaced.
 */
export async function claimPidfile(stateDir: string, pid = process.pid): Promise<Pidfile> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, PID_FILE);
  const holder = await readPid(file);
  if (holder !== undefined && holder !== pid && isAlive(holder)) throw new HostAlreadyRunning(file, holder);
  await writeFileAtomic(file, `${pid}\n`, 0o644);
  return {
    file,
    release: async () => {
      if ((await readPid(file)) === pid) await fs.rm(file, { force: true });
    },
  };
}

async function readPid(file: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await fs.readFile(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
