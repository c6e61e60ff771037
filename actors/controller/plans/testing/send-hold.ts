/** One send a plan asked for, held before it starts. */
export interface HeldSend {
  plan: number;
  node: string;
  /** Lets the send go on. */
  release(): void;
}

/**
 * Holds every node send of every plan before it starts (PlanBook's `beforeSend`), so a path can
 * look at the system while a plan is sending and choose when each send goes. A send whose plan
 * leaves the sending state meanwhile (closed, superseded, its controller stopped) is let go by
 * its signal, and the plan counts it not sent.
 */
export class SendHold {
  readonly #held: HeldSend[] = [];

  /** PlanBook's `beforeSend`. */
  readonly beforeSend = (plan: number, node: string, signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      const entry: HeldSend = {
        plan,
        node,
        release: () => {
          this.#drop(entry);
          resolve();
        },
      };
      if (signal.aborted) {
        reject(new Error('the send was abandoned before it started'));
        return;
      }
      signal.addEventListener('abort', () => {
        this.#drop(entry);
        reject(new Error('the send was abandoned before it started'));
      }, { once: true });
      this.#held.push(entry);
    });

  /** The nodes of `plan` whose sends are held now, sorted. */
  heldFor(plan: number): string[] {
    return this.#held.filter((entry) => entry.plan === plan).map((entry) => entry.node).sort();
  }

  /** Every held send. */
  all(): readonly HeldSend[] {
    return [...this.#held];
  }

  /** Lets every held send of `plan` go on (of `nodes` only, when given); returns the nodes let go. */
  release(plan: number, nodes?: readonly string[]): string[] {
    const chosen = this.#held.filter((entry) => entry.plan === plan && (nodes === undefined || nodes.includes(entry.node)));
    for (const entry of chosen) entry.release();
    return chosen.map((entry) => entry.node).sort();
  }

  #drop(entry: HeldSend): void {
    const index = this.#held.indexOf(entry);
    if (index >= 0) this.#held.splice(index, 1);
  }
}
