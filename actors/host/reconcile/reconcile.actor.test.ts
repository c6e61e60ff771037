import { createActor, SimulatedClock, waitFor } from 'xstate';
import type { ReconcileReason } from '../../../machines/reconcile.machine';
import type { PassReport } from './reconcile-pass';
import { reconcileLogic } from './reconcile.actor';

// The reconcile actor with a pass we can hold open, on a simulated clock: what matters here is
// the scheduling (one at a time, coalescing, drift only while idle), not what a pass applies.

class HeldPasses {
  readonly started: ReconcileReason[][] = [];
  private release: Array<() => void> = [];
  readonly aborted: boolean[] = [];
  pass = (reasons: ReconcileReason[], signal: AbortSignal): Promise<PassReport> => {
    this.started.push(reasons);
    const index = this.started.length - 1;
    return new Promise((resolve) => {
      signal.addEventListener('abort', () => { this.aborted[index] = true; });
      this.release.push(() => resolve({ reasons, startedAt: '', durationMs: 0, results: [], counts: {} }));
    });
  };
  finishNext(): void {
    this.release.shift()?.();
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the reconcile actor', () => {
  test('triggers during a pass coalesce into exactly one more pass', async () => {
    const passes = new HeldPasses();
    const actor = createActor(reconcileLogic({ pass: passes.pass })).start();
    actor.send({ type: 'host.started' });
    actor.send({ type: 'declaration.arrived' });
    actor.send({ type: 'declaration.arrived' });
    actor.send({ type: 'link.restored' });
    expect(passes.started).toEqual([['start']]);
    passes.finishNext();
    await settle();
    expect(passes.started).toEqual([['start'], ['declaration', 'reconnect']]);
    passes.finishNext();
    await waitFor(actor, (s) => s.matches('idle'));
    expect(passes.started).toHaveLength(2);
    expect(actor.getSnapshot().context.passes).toBe(2);
    actor.stop();
  });

  test('drift runs every interval while idle, and not while a pass runs', async () => {
    const clock = new SimulatedClock();
    const passes = new HeldPasses();
    const actor = createActor(reconcileLogic({ pass: passes.pass, driftIntervalMs: 600_000 }), { clock }).start();
    clock.increment(599_999);
    expect(passes.started).toEqual([]);
    clock.increment(1);
    expect(passes.started).toEqual([['drift']]);
    clock.increment(1_200_000); // busy: the timer is not running
    expect(passes.started).toHaveLength(1);
    passes.finishNext();
    await waitFor(actor, (s) => s.matches('idle'));
    clock.increment(600_000);
    expect(passes.started).toEqual([['drift'], ['drift']]);
    actor.stop();
  });

  test('a failed pass is remembered and the host goes on', async () => {
    const actor = createActor(reconcileLogic({ pass: async () => { throw new Error('package database locked'); } })).start();
    actor.send({ type: 'host.started' });
    const idle = await waitFor(actor, (s) => s.matches('idle') && s.context.passes === 1);
    expect(idle.context.lastError).toBe('package database locked');
    actor.stop();
  });

  test('stopping the host aborts the running pass', async () => {
    const passes = new HeldPasses();
    const actor = createActor(reconcileLogic({ pass: passes.pass })).start();
    actor.send({ type: 'declaration.arrived' });
    actor.send({ type: 'host.stopping' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(passes.aborted[0]).toBe(true);
  });
});
