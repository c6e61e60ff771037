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

  /** Applies `change` to the latest state and saves it durably before returning. */
  update(change: (state: HostState) => HostState): Promise<HostState> {
    const next = this.queue.then(async () => {
      const updated = change(this.state);
      await this.store.save(updated);
      this.state = updated;
      return updated;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
