import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { OperatorError } from '../../shared/operator-error';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';

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
  const holder = await readPidFile(file);
  if (holder !== undefined && holder !== pid && isProcessAlive(holder)) throw new HostAlreadyRunning(file, holder);
  await writeFileAtomic(file, `${pid}\n`, 0o644);
  return {
    file,
    release: async () => {
      if ((await readPidFile(file)) === pid) await fs.rm(file, { force: true });
    },
  };
}
