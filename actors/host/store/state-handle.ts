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
      return updated;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
