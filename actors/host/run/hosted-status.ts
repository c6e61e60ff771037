import { isProcessAlive } from '../../shared/process/pid';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { readHostStatus, writeHostStatus, type HostStatus } from './host-status';

/**
 * Whether the status file was written by a live `nox-mesh-host enrol` that is still enrolling:
 * `run` never writes `enrolling`, and every status carries its writer's pid.
 */
export function enrolmentUnderWay(status: HostStatus): boolean {
  return status.lifecycle === 'enrolling' && status.stopped === undefined && isProcessAlive(status.pid);
}

// Waiting to be enrolled, the host has no tree yet: it says so without loading one.
export function hostedStatus(startedAt: Date): HostStatus {
  const now = utcTimestamp(Date.now());
  return { format: 1, pid: process.pid, started_at: utcTimestamp(startedAt), written_at: now, lifecycle: 'hosted', node: null, linked_since: null, last_linked_at: null, last_pass: null, last_declaration: null, tree: null };
}

// Stopped before it was ever a node: the tree, which says so otherwise, never ran.
export function stoppedWhileHosted(startedAt: Date): HostStatus {
  const now = utcTimestamp(Date.now());
  return { ...hostedStatus(startedAt), lifecycle: 'stopped', stopped: { at: now, failed: false, why: 'asked to stop (SIGTERM or SIGINT)' } };
}

/**
 * Writes a status of `run` before it has an identity, unless an enrolment is under way: then the
 * machine is enrolling, and `hosted` (or `stopped` while hosted) written over it would hide that
 * until the enrolment ended. Returns whether it wrote.
 */
export async function showWhileHosted(stateDir: string, status: HostStatus): Promise<boolean> {
  const now = await readHostStatus(stateDir);
  if (now !== undefined && enrolmentUnderWay(now)) return false;
  await writeHostStatus(stateDir, status);
  return true;
}
