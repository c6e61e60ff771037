/**
 * Counts the enrolment requests taken but not yet answered, so that removing a token's broker
 * user — which closes that user's connections at once — waits until no answer is on its way
 * out: the machines that lost a race for a token are still owed "the token was already used".
 */
export class AnswersInHand {
  #count = 0;
  #waiting: Array<() => void> = [];

  /** Counts a request as in hand; call the function returned once it is answered (calling it again does nothing). */
  hold(): () => void {
    this.#count += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#count -= 1;
      if (this.#count > 0) return;
      const waiting = this.#waiting;
      this.#waiting = [];
      for (const wake of waiting) wake();
    };
  }

  /** How many requests are in hand. */
  get count(): number {
    return this.#count;
  }

  /**
   * Resolves once no request is in hand, or after `maxWaitMs` all the same, so a steady stream
   * of enrolments cannot hold a node's broker user back for ever. True when it was quiet.
   */
  async quiet(maxWaitMs: number): Promise<boolean> {
    if (this.#count === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const quiet = await Promise.race([
      new Promise<true>((resolve) => this.#waiting.push(() => resolve(true))),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), maxWaitMs);
      }),
    ]);
    clearTimeout(timer);
    return quiet;
  }
}
