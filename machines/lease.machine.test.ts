import { createActor, fromCallback, fromPromise, SimulatedClock } from 'xstate';
import { isRefusal, LEASE_TIMINGS, leaseMachine, type GateParams, type LeaseRenewed, type LeaseTaken } from './lease.machine';

/** One outstanding call of a provided actor: the test settles it. */
interface Pending<T> {
  input: unknown;
  resolve(value: T): void;
  reject(error: unknown): void;
  aborted(): boolean;
}

/** A provided actor whose calls wait for the test to settle them. */
class Scripted<T, I = void> {
  readonly calls: Array<Pending<T>> = [];
  readonly logic = fromPromise<T, I>(({ input, signal }) =>
    new Promise<T>((resolve, reject) => {
      this.calls.push({ input, resolve, reject, aborted: () => signal.aborted });
    }));

  get last(): Pending<T> {
    const call = this.calls.at(-1);
    if (call === undefined) throw new Error('not called yet');
    return call;
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const refused = { refused: true, message: 'wrong last sequence: 9' };
const unreachable = { refused: false, message: 'timed out asking the broker' };

function start() {
  const clock = new SimulatedClock();
  const take = new Scripted<LeaseTaken>();
  const renew = new Scripted<LeaseRenewed, { revision: number }>();
  const release = new Scripted<void, { revision: number }>();
  const gate: Array<string> = [];
  const rivals: string[] = [];
  const losses: Array<{ reason: string; epoch: number | null }> = [];
  let freed: (() => void) | undefined;
  const actor = createActor(
    leaseMachine.provide({
      actors: {
        take: take.logic,
        renew: renew.logic,
        release: release.logic,
        watchHolder: fromCallback(({ sendBack }) => {
          freed = () => sendBack({ type: 'lease.freed' });
          return () => {
            freed = undefined;
          };
        }),
      },
      actions: {
        openGate: (_, params: GateParams) => {
          gate.push(`open ${params.epoch} at ${params.revision} until ${params.actingUntil}`);
        },
        closeGate: () => {
          gate.push('close');
        },
        noteRival: (_, params: { reason: string }) => {
          rivals.push(params.reason);
        },
        announceLoss: (_, params: { reason: string; epoch: number | null }) => {
          losses.push(params);
        },
      },
    }),
    { clock, input: {} },
  );
  actor.start();
  return { actor, clock, take, renew, release, gate, rivals, losses, free: () => freed?.() };
}

describe('leaseMachine', () => {
  test('takes the lease, opens the gate under the epoch it was taken at, and renews every renewEveryMs', async () => {
    const m = start();
    m.take.last.resolve({ epoch: 41, revision: 41, actingUntil: 12_000 });
    await settle();
    expect(m.actor.getSnapshot().value).toEqual({ holding: 'waiting' });
    expect(m.gate).toEqual(['open 41 at 41 until 12000']);

    m.clock.increment(LEASE_TIMINGS.renewEveryMs - 1);
    expect(m.renew.calls).toHaveLength(0);
    m.clock.increment(1);
    expect(m.renew.last.input).toEqual({ revision: 41 });
    m.renew.last.resolve({ revision: 42, actingUntil: 17_000 });
    await settle();
    expect(m.gate).toEqual(['open 41 at 41 until 12000', 'open 41 at 42 until 17000']);
    m.clock.increment(LEASE_TIMINGS.renewEveryMs);
    expect(m.renew.last.input).toEqual({ revision: 42 });
    expect(m.actor.getSnapshot().context).toMatchObject({ epoch: 41, revision: 42, actingUntil: 17_000, lastError: null });
    m.actor.stop();
  });

  test('stands by while someone else holds the lease, trying every contendEveryMs, and at once when it is given back', async () => {
    const m = start();
    m.take.last.reject({ refused: true, message: 'held by ctl-b since 10:00' });
    await settle();
    expect(m.actor.getSnapshot().value).toBe('contending');
    expect(m.rivals).toEqual(['held by ctl-b since 10:00']);
    m.clock.increment(LEASE_TIMINGS.contendEveryMs);
    expect(m.take.calls).toHaveLength(2);
    m.take.last.reject(unreachable);
    await settle();
    m.free();
    expect(m.take.calls).toHaveLength(3);
    expect(m.actor.getSnapshot().value).toBe('taking');
    expect(m.gate).toEqual([]);
    m.actor.stop();
  });

  test('keeps the lease through a renewal that could not reach the broker, and tries again after renewRetryMs', async () => {
    const m = start();
    m.take.last.resolve({ epoch: 7, revision: 7, actingUntil: 12_000 });
    await settle();
    m.clock.increment(LEASE_TIMINGS.renewEveryMs);
    m.renew.last.reject(unreachable);
    await settle();
    expect(m.actor.getSnapshot().value).toEqual({ holding: 'retrying' });
    expect(m.actor.getSnapshot().context.lastError).toBe('timed out asking the broker');
    // The gate is not closed by the machine: the clock closes it when the deadline passes.
    expect(m.gate).toEqual(['open 7 at 7 until 12000']);
    m.clock.increment(LEASE_TIMINGS.renewRetryMs);
    expect(m.renew.calls).toHaveLength(2);
    expect(m.renew.last.input).toEqual({ revision: 7 });
    m.actor.stop();
  });

  test('ends lost on a refused renewal, closing the gate and announcing the loss with the epoch', async () => {
    const m = start();
    m.take.last.resolve({ epoch: 7, revision: 7, actingUntil: 12_000 });
    await settle();
    m.clock.increment(LEASE_TIMINGS.renewEveryMs);
    m.renew.last.reject(refused);
    await settle();
    expect(m.actor.getSnapshot().value).toBe('lost');
    expect(m.actor.getSnapshot().status).toBe('done');
    expect(m.gate).toEqual(['open 7 at 7 until 12000', 'close']);
    expect(m.losses).toEqual([{ reason: 'wrong last sequence: 9', epoch: 7 }]);
  });

  test('gives the lease back at its revision when the controller stops while holding it, whatever the release says', async () => {
    for (const outcome of ['given back', 'refused'] as const) {
      const m = start();
      m.take.last.resolve({ epoch: 7, revision: 9, actingUntil: 12_000 });
      await settle();
      m.actor.send({ type: 'controller.stopping' });
      expect(m.gate).toEqual(['open 7 at 9 until 12000', 'close']);
      expect(m.release.last.input).toEqual({ revision: 9 });
      if (outcome === 'given back') m.release.last.resolve();
      else m.release.last.reject(refused);
      await settle();
      expect(m.actor.getSnapshot().value).toBe('released');
      expect(m.actor.getSnapshot().context).toMatchObject({ revision: null, actingUntil: 0 });
    }
  });

  test('ends at once, giving nothing back, when the controller stops before holding the lease', async () => {
    const taking = start();
    taking.actor.send({ type: 'controller.stopping' });
    expect(taking.actor.getSnapshot().value).toBe('released');
    expect(taking.take.last.aborted()).toBe(true);
    const contending = start();
    contending.take.last.reject(refused);
    await settle();
    contending.actor.send({ type: 'controller.stopping' });
    expect(contending.actor.getSnapshot().value).toBe('released');
    expect([...taking.release.calls, ...contending.release.calls]).toEqual([]);
  });

  test('takes timings as input', async () => {
    const clock = new SimulatedClock();
    const renew = new Scripted<LeaseRenewed, { revision: number }>();
    const actor = createActor(
      leaseMachine.provide({
        actors: { take: fromPromise(async () => ({ epoch: 1, revision: 1, actingUntil: 1 })), renew: renew.logic },
      }),
      { clock, input: { timings: { renewEveryMs: 50 } } },
    );
    actor.start();
    await settle();
    clock.increment(50);
    expect(renew.calls).toHaveLength(1);
    expect(actor.getSnapshot().context.timings).toEqual({ ...LEASE_TIMINGS, renewEveryMs: 50 });
    actor.stop();
  });
});

describe('isRefusal', () => {
  test('is true only for a failure that says the broker refused', () => {
    expect(isRefusal(refused)).toBe(true);
    expect(isRefusal(unreachable)).toBe(false);
    expect(isRefusal(new Error('boom'))).toBe(false);
    expect(isRefusal(undefined)).toBe(false);
  });
});
