import type { ControllerStatus } from '../../../schema/controller-status';

/**
 * The last composition of status, kept above the tree so it outlives a restart of the child
 * that composes it, and the place where anything with news asks for a new one. Asking while the
 * composer is down (restarting) is remembered and delivered when it listens again.
 */
export class StatusBoard {
  #latest: ControllerStatus | undefined;
  #waiting: Array<(status: ControllerStatus) => void> = [];
  #listener: ((reason: string) => void) | undefined;
  #pending: string | undefined;

  /** The last composition, or undefined before the first. */
  latest(): ControllerStatus | undefined {
    return this.#latest;
  }

  /** The last composition, or the first one once it is composed. */
  current(): Promise<ControllerStatus> {
    if (this.#latest !== undefined) return Promise.resolve(this.#latest);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Keeps a new composition. */
  publish(status: ControllerStatus): void {
    this.#latest = status;
    for (const wake of this.#waiting.splice(0)) wake(status);
  }

  /** Asks for status to be composed again (news from a node, an acting verb). */
  want(reason: string): void {
    if (this.#listener === undefined) this.#pending = reason;
    else this.#listener(reason);
  }

  /** The composer listens for `want`; returns how to stop listening. */
  listen(listener: (reason: string) => void): () => void {
    this.#listener = listener;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) listener(pending);
    return () => {
      if (this.#listener === listener) this.#listener = undefined;
    };
  }
}
