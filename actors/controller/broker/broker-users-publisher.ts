import type { ControllerLog } from '../logs/log-fields';
import type { KV } from '@nats-io/kv';
import type { BrokerUser } from './auth-file';
import { BROKER_USERS_KEY } from './broker-users-bucket-name';
import { encodeBrokerUsers } from './broker-users-bucket';

/** How long the publisher waits after a failed write before writing the latest list again. */
const RETRY_MS = 1000;

/**
 * Puts the acting controller's user list into the replicated bucket every server's `broker
 * sync` reads. Only the latest list matters, so a list offered while another is being written
 * replaces it, and a write that fails (a server down, JetStream electing a leader) is tried
 * again every second until one succeeds: the controller's own change (its auth.conf, its
 * reload) never waits for the cluster, and the other servers catch up when it answers.
 */
export class BrokerUsersPublisher {
  readonly #open: () => Promise<KV>;
  readonly #log: ControllerLog;
  #kv: Promise<KV> | undefined;
  #latest: readonly BrokerUser[] | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(open: () => Promise<KV>, log: ControllerLog) {
    this.#open = open;
    this.#log = log;
  }

  /** Puts `users` in the bucket, now or once it answers; a later offer replaces an unwritten one. */
  offer(users: readonly BrokerUser[]): void {
    this.#latest = users;
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves once every offered list is written (or the publisher stopped). */
  async settled(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Stops trying; an unwritten list stays unwritten. */
  stop(): void {
    this.#stopped = true;
  }

  async #run(): Promise<void> {
    let failing = false;
    while (this.#latest !== undefined && !this.#stopped) {
      const users = this.#latest;
      try {
        this.#kv ??= this.#open();
        await (await this.#kv).put(BROKER_USERS_KEY, encodeBrokerUsers(users));
        if (failing) this.#log('broker users: the list is in the cluster\'s bucket again', { level: 'info' });
        failing = false;
        if (this.#latest === users) this.#latest = undefined;
      } catch (error) {
        // A bucket that could not be opened is opened again next time.
        this.#kv = undefined;
        if (!failing) this.#log(`broker users: the list could not be put in the cluster's bucket (${(error as Error).message}); trying again every ${RETRY_MS / 1000} s`, { level: 'warn' });
        failing = true;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
}
