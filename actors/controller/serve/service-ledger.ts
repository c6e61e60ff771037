import type { ControllerLog } from '../logs/log-fields';

/**
 * One service of the serving controller, run as one child of its supervision tree: the bus
 * watch, the store watch, the broker's user list, a group of parts, status, control calls.
 */
export interface ControllerService {
  /** The child's id in the tree (`bus`, `enrolment`, `control`). */
  id: string;
  /** Starts only while this controller holds the lease: everything that acts. */
  needsLease: boolean;
  /**
   * Starts the service and resolves once it runs. Throwing fails this incarnation, which the
   * supervisor restarts after a backoff. `signal` aborts when the child is stopped meanwhile.
   */
  start(signal: AbortSignal): Promise<RunningService>;
}

/** A service running. */
export interface RunningService {
  /** Stops its work (subscriptions, timers) and waits for what is under way. */
  stop(): Promise<void>;
  /** Rejects when the service fails while running (its connection closed, its check failed). */
  failed?: Promise<never>;
}

interface Incarnation {
  running: RunningService;
  stopping: Promise<void> | undefined;
  /** Makes the incarnation fail as a crash would, after stopping its work. */
  fail(error: Error): void;
}

/**
 * Every service's running incarnation, kept above the tree so that the composition root can stop
 * them in order (control calls first, the bus watch last), a test can kill one, and a restarted
 * child waits for its previous incarnation to have stopped before starting again (two report
 * receivers must not take reports side by side).
 */
export class ServiceLedger {
  readonly #onChange: (what: string) => void;
  readonly #current = new Map<string, Incarnation>();
  readonly #lastStop = new Map<string, Promise<void>>();
  readonly #firstStart = new Map<string, { promise: Promise<void>; resolve(): void }>();
  readonly #incarnations = new Map<string, number>();
  readonly #starting = new Set<Promise<unknown>>();

  /** `onChange` hears when a service fails and when it runs again (status composes again). */
  constructor(options: { onChange?(what: string): void } = {}) {
    this.#onChange = options.onChange ?? (() => undefined);
  }

  /** Resolves once the previous incarnation of `id` (if any) has stopped. */
  async previousStopped(id: string): Promise<void> {
    await this.#lastStop.get(id)?.catch(() => undefined);
  }

  /**
   * Runs a started incarnation of `id` until it fails (its `failed` rejects, or it is killed),
   * then stops it and rejects with the failure; when `signal` aborts (the supervisor stopped the
   * child) it stops it and never settles.
   */
  run(id: string, running: RunningService, signal: AbortSignal): Promise<never> {
    this.#started(id).resolve();
    const incarnations = (this.#incarnations.get(id) ?? 0) + 1;
    this.#incarnations.set(id, incarnations);
    if (incarnations > 1) this.#onChange(`${id} runs again`);
    return new Promise<never>((_, reject) => {
      const incarnation: Incarnation = {
        running,
        stopping: undefined,
        fail: (error) => {
          if (this.#current.get(id) !== incarnation) return;
          this.#onChange(`${id} failed`);
          void this.#stop(id, incarnation).finally(() => reject(error));
        },
      };
      this.#current.set(id, incarnation);
      running.failed?.catch((error: unknown) => incarnation.fail(error instanceof Error ? error : new Error(String(error))));
      if (signal.aborted) void this.#stop(id, incarnation);
      else signal.addEventListener('abort', () => void this.#stop(id, incarnation), { once: true });
    });
  }

  /**
   * Keeps track of a start under way (`work`), so that `settled` waits for it too: a child
   * stopped while it starts goes on starting (and then stops what it started) in the background.
   */
  starting<T>(work: Promise<T>): Promise<T> {
    const tracked = work.then(
      () => undefined,
      () => undefined,
    );
    this.#starting.add(tracked);
    void tracked.finally(() => this.#starting.delete(tracked));
    return work;
  }

  /** Resolves once `id` has started at least once. */
  started(id: string): Promise<void> {
    return this.#started(id).promise;
  }

  /** Resolves once every one of `ids` has started at least once; rejects if `signal` aborts first. */
  async allStarted(ids: readonly string[], signal?: AbortSignal): Promise<void> {
    const all = Promise.all(ids.map((id) => this.started(id)));
    if (signal === undefined) {
      await all;
      return;
    }
    signal.throwIfAborted();
    let onAbort: () => void = () => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason ?? new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([all, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Makes the running incarnation of `id` fail with `reason`, as a crash would: its work is
   * stopped and its supervisor restarts it. False when `id` is not running.
   */
  kill(id: string, reason: string): boolean {
    const incarnation = this.#current.get(id);
    if (incarnation === undefined || incarnation.stopping !== undefined) return false;
    incarnation.fail(new Error(reason));
    return true;
  }

  /** The ids running now. */
  runningIds(): string[] {
    return [...this.#current.keys()];
  }

  /** Stops the running incarnations of `ids`, one after the other, in that order. */
  async stopInOrder(ids: readonly string[], log: ControllerLog): Promise<void> {
    for (const id of ids) {
      const incarnation = this.#current.get(id);
      if (incarnation === undefined) continue;
      await this.#stop(id, incarnation).catch((error: unknown) => log(`${id}: did not stop cleanly: ${(error as Error)?.message ?? String(error)}`, { level: 'warn', child: id }));
    }
  }

  /** Resolves once every start and stop under way has ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#starting, ...this.#lastStop.values()]);
  }

  #stop(id: string, incarnation: Incarnation): Promise<void> {
    if (incarnation.stopping === undefined) {
      incarnation.stopping = incarnation.running.stop();
      this.#lastStop.set(id, incarnation.stopping);
      void incarnation.stopping.catch(() => undefined).finally(() => {
        if (this.#current.get(id) === incarnation) this.#current.delete(id);
      });
    }
    return incarnation.stopping;
  }

  #started(id: string): { promise: Promise<void>; resolve(): void } {
    let entry = this.#firstStart.get(id);
    if (entry === undefined) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      entry = { promise, resolve };
      this.#firstStart.set(id, entry);
    }
    return entry;
  }
}
