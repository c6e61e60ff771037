/**
 * Runs work for one node at a time, in the order it was asked for, while work for different
 * nodes runs side by side. Everything that decides what a node is sent goes through here, so
 * two declarations for one node are never composed and published at once: the later
 * generation could otherwise be published first, and the stream, keeping only the latest per
 * node, would end on the older one.
 *
 * Work must not wait, from inside `run`, on other work for the same node (it would wait for
 * itself). Work for other nodes is fine to start from inside, but not to await there, or two
 * nodes waiting on each other would both stop.
 */
export class NodeWorkQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier work for `node` has settled; resolves or rejects as it does. */
  run<T>(node: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(node) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(node, tail);
    void tail.then(() => {
      if (this.#tails.get(node) === tail) this.#tails.delete(node);
    });
    return result;
  }

  /** Resolves once every work asked for so far has settled. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }
}

const queues = new WeakMap<object, NodeWorkQueue>();

/**
 * The one queue of a serving controller, shared by every part that sends declarations. Keyed
 * by the controller's context, so each controller (and each test) has its own.
 */
export function nodeWorkQueue(ctx: object): NodeWorkQueue {
  let queue = queues.get(ctx);
  if (queue === undefined) {
    queue = new NodeWorkQueue();
    queues.set(ctx, queue);
  }
  return queue;
}
