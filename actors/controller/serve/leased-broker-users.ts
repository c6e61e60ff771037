import type { BrokerUsers } from '../controller-context';

/**
 * The broker's user list of a controller that may be standing by. The list a controller holds
 * is read from the store when it opens (FileBrokerUsers.open brings the broker in line with it),
 * and a standby's would be stale by the time it takes over: every node enrolled meanwhile would
 * be missing from the first list it writes. So the list is opened when this controller starts
 * acting (`open`, from the tree's `broker` child), and each change waits for it.
 *
 * A failed open is forgotten, so the next one (the child restarted, or the next change) tries
 * again.
 */
export class LeasedBrokerUsers implements BrokerUsers {
  readonly #openList: () => Promise<BrokerUsers>;
  #opened: Promise<BrokerUsers> | undefined;

  /** `openList` opens the list and reconciles it with the store (FileBrokerUsers.open). */
  constructor(openList: () => Promise<BrokerUsers>) {
    this.#openList = openList;
  }

  /** Opens the list if not yet open; resolves once the broker holds what the store says. */
  async open(): Promise<void> {
    await this.#list();
  }

  async addNode(node: string, nkeyPublic: string): Promise<void> {
    await (await this.#list()).addNode(node, nkeyPublic);
  }

  async removeNode(node: string): Promise<void> {
    await (await this.#list()).removeNode(node);
  }

  async addEnrolment(tokenId: string, password: string): Promise<void> {
    await (await this.#list()).addEnrolment(tokenId, password);
  }

  async removeEnrolment(tokenId: string): Promise<void> {
    await (await this.#list()).removeEnrolment(tokenId);
  }

  #list(): Promise<BrokerUsers> {
    const opening = (this.#opened ??= this.#openList());
    opening.catch(() => {
      if (this.#opened === opening) this.#opened = undefined;
    });
    return opening;
  }
}
