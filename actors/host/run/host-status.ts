import { constants } from 'node:fs';
import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';

/** The status file's name in the state directory: what `nox-mesh-host status` and `tree` read. */
export const STATUS_FILE = 'host-status.json';

/** The last pass the running host made. */
export interface PassStatus {
  /** When it finished (UTC, ISO 8601). */
  at: string;
  /** What started it: `start`, `declaration`, `drift`, `link`. */
  reasons: string[];
  /** `converged`, or `failed` when a resource failed, was refused or could not be kept. */
  outcome: 'converged' | 'failed';
  /** Resources by outcome (`applied`, `unchanged`, `removed`, `failed`, …). */
  counts: Record<string, number>;
}

/** The last declaration the host took or holds. */
export interface DeclarationStatus {
  generation: number;
  kind: string;
  epoch: number;
  resources: number;
  /** When this host took it; null for one it already held when it started. */
  taken_at: string | null;
}

/** How the host process ended: the last thing its status file says. */
export interface StoppedStatus {
  /** When it stopped (UTC, ISO 8601). */
  at: string;
  /** False when it was asked to stop or restarts into a new version; true when something stopped it. */
  failed: boolean;
  /** Why, in a sentence: the signal, the new version, or the error that stopped it. */
  why: string;
}

/**
 * What the running host says about itself, rewritten whenever it changes. Read without asking
 * the host anything: the host opens no socket, so a file is how it is seen.
 */
export interface HostStatus {
  format: 1;
  /** The process that wrote it; the pidfile says whether it still runs. */
  pid: number;
  /** When the host process started. */
  started_at: string;
  written_at: string;
  /** The lifecycle actor's state: `hosted`, `enrolled.operating`, `disconnected`, …; `stopped` once the process has ended. */
  lifecycle: string;
  node: string | null;
  /** Since when the current link is up; null while there is none. */
  linked_since: string | null;
  /** When the host last had a link (up to now while linked); null when it never had one. */
  last_linked_at: string | null;
  last_pass: PassStatus | null;
  last_declaration: DeclarationStatus | null;
  /**
   * Present once the host has taken its identity as revoked (the broker refuses its
   * credentials): what happened and what to do. The store is let go while it is.
   */
  revoked?: { node: string; refused_since: string; detail: string };
  /**
   * Present while the broker presents a certificate this node does not pin (a rotation the node
   * was away for, or an interception): what was met, what is pinned, and what to do.
   */
  certificate_unpinned?: { since: string; broker_url: string; presented: string | null; pinned: string[]; detail: string };
  /** The live supervision tree; null while the host waits to be enrolled and has none. */
  tree: SupervisionTreeNode | null;
  /** Set in the last status a host writes as its process ends; absent while it runs. */
  stopped?: StoppedStatus;
}

/**
 * Writes the status file so that a reader sees the whole old file or the whole new one: a file
 * beside it, renamed over it. Not synced to disk: a status is worth nothing after a power cut
 * (the host that wrote it is gone), and a flush at every change would cost the host for nothing.
 */
export async function writeHostStatus(stateDir: string, status: HostStatus): Promise<void> {
  const file = path.join(stateDir, STATUS_FILE);
  const temp = path.join(stateDir, `.${STATUS_FILE}.${process.pid}.tmp`);
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
  try {
    await handle.writeFile(`${JSON.stringify(status, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  await fs.rename(temp, file);
}

/** The status file as written, or undefined when there is none or it is not a status of this format. */
export async function readHostStatus(stateDir: string): Promise<HostStatus | undefined> {
  try {
    const status = JSON.parse(await fs.readFile(path.join(stateDir, STATUS_FILE), 'utf8')) as Partial<HostStatus> | null;
    return status !== null && typeof status === 'object' && status.format === 1 && typeof status.pid === 'number' ? (status as HostStatus) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long the writer lets changes gather before it writes: a declaration taken, the pass it
 * starts and that pass's end come within a few milliseconds of each other, and each is an actor's
 * new state. Written one by one, that was about three files a declaration; gathered, it is one.
 */
export const STATUS_SETTLE_MS = 50;

/**
 * Keeps the status file up to date without ever writing two at once, and without writing more
 * than it must: changes asked for within STATUS_SETTLE_MS of the first are written together,
 * with what is true then; a change asked for while a file is being written is written once that
 * one is done; and a status that says nothing new (only its `written_at` differs from the last
 * one written) is not written at all. The file is advisory (see writeHostStatus): nothing waits
 * for it but a person, or a test polling it.
 */
export class StatusWriter {
  private writing: Promise<void> | undefined;
  private again = false;
  /** A write is due and has not composed its status yet. */
  private settling = false;
  /** The last status written, without its `written_at`. */
  private lastWritten: string | undefined;

  constructor(
    private readonly stateDir: string,
    private readonly compose: () => HostStatus,
    private readonly onError: (error: unknown) => void,
    private readonly settleMs = STATUS_SETTLE_MS,
  ) {}

  /** Something changed: the file is rewritten soon. */
  changed(): void {
    // Not composed yet: the write to come takes this change in.
    if (this.settling) return;
    if (this.writing !== undefined) {
      this.again = true;
      return;
    }
    this.settling = true;
    this.writing = new Promise<void>((resolve) => setTimeout(resolve, this.settleMs))
      .then(() => {
        this.settling = false;
        return this.writeIfNew();
      })
      .catch(this.onError)
      .finally(() => {
        this.writing = undefined;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
  }

  /** Settles once every change asked for so far is written. */
  async flushed(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  private async writeIfNew(): Promise<void> {
    const status = this.compose();
    const said = JSON.stringify({ ...status, written_at: undefined });
    if (said === this.lastWritten) return;
    await writeHostStatus(this.stateDir, status);
    this.lastWritten = said;
  }
}
