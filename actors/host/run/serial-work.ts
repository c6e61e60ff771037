/**
 * Runs jobs one after another in the order given, so what the host sends upward goes in the
 * order it happened, and a release never overtakes the report before it. A failed job does not
 * stop the ones after it; its error goes to `onError`.
 */
export class SerialWork {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Queues `job`; the promise settles when it has run. */
  add(job: () => Promise<void>): Promise<void> {
    const next = this.tail.then(job).catch(this.onError);
    this.tail = next;
    return next;
  }

  /** Settles when every job queued so far has run. */
  idle(): Promise<void> {
    return this.tail;
  }
}
