import type { HostState } from '../../../schema/host-state';
import type { HostStore } from './host-store';

/**
 * The running host's one copy of its state, over the store: reads are from memory, every
 * change is written through before it is visible, and changes are applied one at a time so
 * two callers never write over each other's update.
 */
export class StateHandle {
  private state: HostState;
  private queue: Promise<unknown> = Promise.resolve();
  /** A change made by {@link stage} that no save has written yet. */
  private unsaved = false;

  constructor(private readonly store: HostStore, initial: HostState) {
    this.state = initial;
  }

  current(): HostState {
    return this.state;
  }

  /**
   * Applies `change` to the latest state and saves it durably before returning. With `after`,
   * the new state is renamed into place only once `after` has settled, and not at all when it
   * rejects (see SaveOptions): for syncs that must be durable before the state records them,
   * which then run beside the state's own.
   */
  update(change: (state: HostState) => HostState, options: { after?: Promise<void> } = {}): Promise<HostState> {
    // Handled now: it may reject before this update's turn comes; the save still sees it.
    options.after?.catch(() => undefined);
    const next = this.queue.then(async () => {
      const updated = change(this.state);
      await this.store.save(updated, options.after === undefined ? {} : { after: options.after });
      this.state = updated;
      this.unsaved = false;
      return updated;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Applies `change` in memory only; the next {@link update} writes it with its own change, as
   * every save writes the whole state, and {@link flush} writes it when none came. For a change
   * that only needs to be durable before anything it leads to is done: `apply` takes the
   * resources it was given this way, so they are written with the pass's first marks rather
   * than alone (one whole-state write fewer), and a host killed before that write had touched
   * nothing the store would need to know of.
   */
  stage(change: (state: HostState) => HostState): Promise<HostState> {
    const next = this.queue.then(() => {
      this.state = change(this.state);
      this.unsaved = true;
      return this.state;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Writes what {@link stage} changed and no update has written since; nothing when there is none. */
  flush(): Promise<HostState> {
    const next = this.queue.then(async () => {
      if (!this.unsaved) return this.state;
      await this.store.save(this.state);
      this.unsaved = false;
      return this.state;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
