import type { Account } from './accounts';
import { HeldDirectories } from './held-directories';
import type { Identity } from './root-path';

/**
 * What one reconcile pass may look up once and reuse: the real directory each declared
 * directory resolves to under the root (see resolveUnderRoot), and the id each declared owner or
 * group name resolves to (see resolveUser). A pass over a thousand files in one directory would
 * otherwise walk the same directories and read the same account files thousands of times.
 *
 * Only what exists is kept: a directory that is missing, or a name the account files do not
 * list, is looked up again, since an earlier resource of the same pass (a directory, an action
 * adding a user) may make it. It also holds open the directories files are written through
 * (HeldDirectories), so each is opened from the root once a pass. Converge makes one per pass
 * and closes it at the end; appliers called without one look everything up each time.
 */
export class PassMemo {
  /** Real directories, by the declared directory path they were resolved from. */
  readonly directories = new Map<string, string>();
  /** The device, inode and owner of each of those real directories, as the walk checked them. */
  readonly identities = new Map<string, Identity>();
  /** Resolved accounts, by `user:name` or `group:name`. */
  readonly accounts = new Map<string, Account>();
  /**
   * The declared paths of the files this pass wrote (applied and read back), so a service that
   * restarts on one (ServiceResource.restart_on) is restarted after it.
   */
  readonly filesWritten = new Set<string>();
  /**
   * The services this pass restarted or started since one of their restart_on files was last
   * written, so none is restarted twice for one change. Writing such a file takes the service
   * out again (see wroteFile): a restart before the write did not read it.
   */
  readonly servicesRestarted = new Set<string>();

  /** Directories held open for the pass, by real path. */
  readonly held = new HeldDirectories();

  /** Closes what the pass holds open; the memo is not used after. */
  close(): void {
    this.held.close();
  }

  /** The running services whose restart_on names each declared path, for wroteFile. */
  readonly restartOn = new Map<string, string[]>();
  /**
   * Services owed a restart by an earlier pass (HostState.restarts_owed): one killed between
   * writing a file they restart on and restarting them. Restarted as if the file changed now.
   */
  readonly restartsOwed = new Set<string>();

  /** Notes that the pass wrote the file at `path` (applied and read back). */
  wroteFile(path: string): void {
    this.filesWritten.add(path);
    for (const service of this.restartOn.get(path) ?? []) this.servicesRestarted.delete(service);
  }
}
