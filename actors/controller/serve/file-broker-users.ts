import { promises as fs } from 'node:fs';
import { renderAuthFile, type BrokerUser } from '../broker/auth-file';
import { brokerPaths } from '../broker/broker-paths';
import { reloadMeshBrokers } from '../broker/reload-mesh-brokers';
import type { BrokerUsers } from '../controller-context';
import type { Sql } from '../store/sql-store';
import { readBrokerUserList, writeBrokerUserList } from './broker-user-list';
import { reconcileBrokerUsers } from './reconcile-broker-users';

/** How a FileBrokerUsers finds its broker and the users it must always hold. */
export interface FileBrokerUsersOptions {
  /** The broker's directory (mesh.json `broker.dir`). */
  brokerDir: string;
  controllerNkey: string;
  operatorNkey: string;
  /** The cluster's `broker sync` user, kept in the list like the controller's own (cluster.json `sync_nkey`). */
  syncNkey?: string | undefined;
  /**
   * Hears every list written, and the list at open: on a cluster, puts it in the bucket every
   * server's `mesh-control broker sync` applies (BrokerUsersPublisher). Must not throw or wait.
   */
  publish?: (users: readonly BrokerUser[]) => void;
  /**
   * Makes the running broker read its user list again and waits for it to confirm. Default:
   * SIGHUP to the pid in the broker's pid file, confirmed from its log, for the one server or
   * each of a cluster's that runs here (reloadMeshBrokers).
   */
  reload?: () => Promise<void>;
  /** Told what changed when the list is reconciled at start. */
  log?: (line: string) => void;
}

/**
 * The broker's user list as the serving controller changes it: held in memory, written whole
 * (users.json, then auth.conf) and the broker reloaded, one change at a time. A change that
 * leaves the list as it was writes and reloads nothing, so removing a user twice is harmless.
 *
 * A failed reload leaves the files written and the change in the list: the files say what the
 * broker must hold, and the error goes to the caller, who must not report the change as made.
 */
export class FileBrokerUsers implements BrokerUsers {
  #users: BrokerUser[];
  #queue: Promise<unknown> = Promise.resolve();
  readonly #brokerDir: string;
  readonly #reload: () => Promise<void>;
  readonly #publish: (users: readonly BrokerUser[]) => void;

  private constructor(brokerDir: string, users: BrokerUser[], reload: () => Promise<void>, publish: (users: readonly BrokerUser[]) => void) {
    this.#brokerDir = brokerDir;
    this.#users = users;
    this.#reload = reload;
    this.#publish = publish;
  }

  /**
   * Opens the list for a starting controller and brings it in line with the store
   * (reconcileBrokerUsers): nodes as the store holds them, enrolment users of open tokens only.
   * Writes and reloads only when that changed something.
   */
  static async open(sql: Sql, now: Date, options: FileBrokerUsersOptions): Promise<FileBrokerUsers> {
    const paths = brokerPaths(options.brokerDir);
    const reload = options.reload ?? (() => reloadMeshBrokers(options.brokerDir));
    const previous = await readBrokerUserList(options.brokerDir);
    if (previous.problem !== undefined) options.log?.(`broker users: ${previous.problem}; open tokens' users are lost and those tokens must be issued again`);
    const nodes = await sql.query<{ name: string; nkey: string }>('SELECT name, nkey FROM nodes WHERE nkey IS NOT NULL ORDER BY name');
    const open = await sql.query<{ id: string }>('SELECT id FROM tokens WHERE consumed_at IS NULL AND expires_at > $1', [now]);
    const users = reconcileBrokerUsers(previous.users, {
      controllerNkey: options.controllerNkey,
      operatorNkey: options.operatorNkey,
      syncNkey: options.syncNkey,
      nodes,
      openTokenIds: new Set(open.map((row) => row.id)),
    });
    // Compared with auth.conf itself, which is what the broker reads: users.json may be missing
    // or older than it.
    const onDisk = await fs.readFile(paths.authFile, 'utf8').catch(() => undefined);
    if (onDisk !== renderAuthFile(users)) {
      await writeBrokerUserList(options.brokerDir, users);
      await reload();
      options.log?.(`broker users: brought in line with the store (${describeList(users)})`);
    }
    // Put in the bucket even when nothing changed here: the other servers may hold an older list.
    const publish = options.publish ?? (() => undefined);
    publish(users);
    return new FileBrokerUsers(options.brokerDir, users, reload, publish);
  }

  /** The users as last written. */
  users(): readonly BrokerUser[] {
    return this.#users;
  }

  addNode(node: string, nkeyPublic: string): Promise<void> {
    return this.#change((users) => [...users.filter((user) => !(user.role === 'node' && user.node === node)), { role: 'node', node, nkey: nkeyPublic }]);
  }

  removeNode(node: string): Promise<void> {
    return this.#change((users) => users.filter((user) => !(user.role === 'node' && user.node === node)));
  }

  addEnrolment(tokenId: string, password: string): Promise<void> {
    return this.#change((users) => [...users.filter((user) => !(user.role === 'enrolment' && user.token_id === tokenId)), { role: 'enrolment', token_id: tokenId, password }]);
  }

  removeEnrolment(tokenId: string): Promise<void> {
    return this.#change((users) => users.filter((user) => !(user.role === 'enrolment' && user.token_id === tokenId)));
  }

  #change(edit: (users: readonly BrokerUser[]) => BrokerUser[]): Promise<void> {
    const run = async (): Promise<void> => {
      const next = edit(this.#users);
      if (sameList(next, this.#users)) return;
      await writeBrokerUserList(this.#brokerDir, next);
      this.#users = next;
      this.#publish(next);
      await this.#reload();
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}

function sameList(a: readonly BrokerUser[], b: readonly BrokerUser[]): boolean {
  try {
    return renderAuthFile(a) === renderAuthFile(b);
  } catch {
    // One of them cannot be rendered: let the write refuse it with the reason.
    return false;
  }
}

function describeList(users: readonly BrokerUser[]): string {
  const count = (role: BrokerUser['role']): number => users.filter((user) => user.role === role).length;
  return `${count('node')} node(s), ${count('enrolment')} open token(s)`;
}
