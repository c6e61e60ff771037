import path from 'node:path';
import { OperatorError } from '../../shared/operator-error';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';
import { readHostStatus, STATUS_FILE, type HostStatus } from './host-status';
import { enrolmentUnderWay } from './hosted-status';
import { PID_FILE } from './pidfile';

/** No `nox-mesh-host run` is running over this state directory. */
export class HostNotRunning extends OperatorError {
  constructor(stateDir: string, last: HostStatus | undefined) {
    // The last host to run here said why it stopped, unless it died without a word.
    const seen = last === undefined ? '' : last.stopped !== undefined ? ` (it stopped at ${last.stopped.at}: ${last.stopped.why})` : ` (its status was last written at ${last.written_at})`;
    super(`nox-mesh-host run is not running over this state directory${seen}`, {
      value: stateDir,
      next: 'start it (systemctl start nox-mesh-host / rc-service nox-mesh-host start), or name the state directory it runs over with --root or --state-dir',
    });
  }
}

/** The host runs, but has not said how it is (it is starting, or it is a version that does not). */
export class HostStatusUnknown extends OperatorError {
  constructor(file: string, pid: number) {
    super(`nox-mesh-host run (process ${pid}) is running but has written no status of its own yet`, {
      value: file,
      next: 'ask again in a moment; a host that never writes it is older than this command: upgrade it',
    });
  }
}

/**
 * The status of the host running over `stateDir`, as it last wrote it. The pidfile says whether
 * it runs: a status file left by a host that has stopped, or written by another process than
 * the one in the pidfile, is not the running host's, and is not shown as if it were.
 *
 * One other writer is believed: `nox-mesh-host enrol`, while it lives and its lifecycle is
 * `enrolling` (actors/host/enrolment/enrol-status.ts). Whether or not `run` runs beside it, an
 * enrolment under way is what this machine is doing; its pid says which process that is.
 */
export async function readRunningHost(stateDir: string): Promise<HostStatus> {
  const pid = await readPidFile(path.join(stateDir, PID_FILE));
  const status = await readHostStatus(stateDir);
  if (status !== undefined && enrolmentUnderWay(status)) return status;
  if (pid === undefined || !isProcessAlive(pid)) throw new HostNotRunning(stateDir, status);
  if (status === undefined || status.pid !== pid) throw new HostStatusUnknown(path.join(stateDir, STATUS_FILE), pid);
  return status;
}
