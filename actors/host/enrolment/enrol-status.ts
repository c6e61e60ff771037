import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { isProcessAlive, readPidFile } from '../../shared/process/pid';
import { utcTimestamp } from '../../shared/time/utc-timestamp';
import { readHostStatus, STATUS_FILE, writeHostStatus, type HostStatus } from '../run/host-status';
import { PID_FILE } from '../run/pidfile';

/**
 * The status file as `nox-mesh-host enrol` keeps it: the file `run` writes, written the same way
 * (host-status.ts), with this process's pid, so a reader can tell an enrolment under way from
 * the running host (running-host.ts) and never takes one for the other.
 *
 * - While the lifecycle is `enrolling` the file says so.
 * - Enrolled beside a running `run`: the file is left for `run`, which writes its own as soon as
 *   it has taken the identity; writing `enrolled` here could land after that and hide it.
 * - Enrolled with no `run`: the file says `enrolled`, and that this process has ended, and what
 *   to start.
 * - Refused: the machine is as it was, so the file is put back as it was (or removed, when there
 *   was none).
 *
 * Each end touches the file only while it is still this process's: a `run` that has written
 * since is the one to believe.
 */
export class EnrolStatus {
  private writing: Promise<void> = Promise.resolve();
  private shown: string | undefined;

  private constructor(
    private readonly stateDir: string,
    private readonly before: HostStatus | undefined,
    private readonly startedAt: Date,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** Remembers the status file as it is, to put it back if the enrolment is refused. */
  static async begin(stateDir: string, failed: (error: unknown) => void = () => undefined): Promise<EnrolStatus> {
    return new EnrolStatus(stateDir, await readHostStatus(stateDir), new Date(), failed);
  }

  /**
   * The lifecycle actor took a state. Only `enrolling` is this process's to tell: `hosted` is
   * what the file says already, and the end is written by `enrolled` or `refused`.
   */
  show(lifecycle: string, node: string | null): void {
    if (lifecycle !== 'enrolling' || this.shown === lifecycle) return;
    this.shown = lifecycle;
    this.queue(async () => {
      // A machine never enrolled may have no state directory yet; the store makes it as `run` does.
      await fs.mkdir(this.stateDir, { recursive: true, mode: 0o700 });
      await writeHostStatus(this.stateDir, this.status(lifecycle, node));
    });
  }

  /** The lifecycle reached `enrolled`, as node `node`. */
  async enrolled(node: string): Promise<void> {
    this.queue(async () => {
      if (!(await this.stillOurs()) || (await hostRunning(this.stateDir))) return;
      const now = utcTimestamp(Date.now());
      await writeHostStatus(this.stateDir, {
        ...this.status('enrolled', node),
        stopped: { at: now, failed: false, why: `nox-mesh-host enrol enrolled this machine as node ${node}; start nox-mesh-host run (or the service) to receive its declarations` },
      });
    });
    await this.flushed();
  }

  /** The lifecycle went back to `hosted`: nothing changed, and the file says so again. */
  async refused(): Promise<void> {
    this.queue(async () => {
      if (!(await this.stillOurs())) return;
      if (this.before === undefined) await fs.rm(path.join(this.stateDir, STATUS_FILE), { force: true });
      else await writeHostStatus(this.stateDir, this.before);
    });
    await this.flushed();
  }

  /** Settles once every write asked for so far is done. */
  async flushed(): Promise<void> {
    await this.writing;
  }

  // One write at a time, in the order asked; a failed write is told and does not stop the next.
  private queue(write: () => Promise<void>): void {
    this.writing = this.writing.then(write).catch(this.failed);
  }

  private async stillOurs(): Promise<boolean> {
    const now = await readHostStatus(this.stateDir);
    return now !== undefined && now.pid === process.pid && now.stopped === undefined;
  }

  private status(lifecycle: string, node: string | null): HostStatus {
    return {
      format: 1,
      pid: process.pid,
      started_at: utcTimestamp(this.startedAt),
      written_at: utcTimestamp(Date.now()),
      lifecycle,
      node,
      linked_since: null,
      last_linked_at: null,
      last_pass: null,
      last_declaration: null,
      tree: null,
    };
  }
}

// `nox-mesh-host run` runs over this state directory: its pidfile names a live process.
async function hostRunning(stateDir: string): Promise<boolean> {
  const pid = await readPidFile(path.join(stateDir, PID_FILE));
  return pid !== undefined && isProcessAlive(pid);
}
