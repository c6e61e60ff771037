/**
 * The lease machine's paths, walked by the real lease actor (leaseLogic) over a real KV bucket
 * on a real nats-server and the epoch floor in a real PostgreSQL (model-tests/rigs/lease-rig.ts).
 * The actor runs on a simulated clock, which is also the gate's clock.
 *
 * Every take, renewal and release the actor makes is held until the driver lets it go, after
 * arranging what the broker will answer: for a take that succeeds the key is freed, for one that
 * fails a rival controller holds it; a refused renewal or release is a rival having taken the
 * key from under this controller; a renewal that cannot reach the broker is one sent while this
 * controller's link is frozen (a TCP proxy), which times out for real and lands once thawed. A
 * key given back is heard through the real watch. Delays fire by advancing the clock.
 *
 * The assertions read the actor's state, the gate (acting or not, under which epoch), who holds
 * the key in the bucket, the store's epoch floor, and the losses the actor announced.
 */
import { LEASE_TIMINGS, leaseMachine, type LeaseContext } from '../machines/lease.machine';
import { readEpochFloor } from '../actors/controller/store/controller-epoch.repo';
import { LeaseLost } from '../actors/controller/lease/lease-errors';
import { LEASE_KEY } from '../actors/controller/lease/lease-bucket';
import { eventually } from '../actors/controller/serve/testing/eventually';
import { useLeaseWorld } from '../actors/controller/lease/testing/lease-world';
import { afterEventType, describeModel, doneEvent, errorEvent } from './harness';
import { LeaseRig } from './rigs/lease-rig';

const world = useLeaseWorld();

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Waits until the real actor is where the model says it is after a step. */
async function reaches(rig: LeaseRig, value: unknown): Promise<void> {
  await eventually(`the lease actor reaches ${JSON.stringify(value)}`, () => JSON.stringify(rig.actor.getSnapshot().value) === JSON.stringify(value), {
    timeoutMs: 5_000,
    seen: () => JSON.stringify(rig.actor.getSnapshot().value),
  });
}

// Snapshots that behave alike are one vertex: where the machine is, whether it ever held the
// lease, and whether the last take or renewal failed.
function serializeState(snapshot: { value: unknown; context: LeaseContext }): string {
  return JSON.stringify([snapshot.value, snapshot.context.epoch !== null, snapshot.context.lastError !== null]);
}

const taken = doneEvent('take', { epoch: 1, revision: 1, actingUntil: LEASE_TIMINGS.ttlMs - LEASE_TIMINGS.marginMs });
const renewed = doneEvent('renew', { revision: 2, actingUntil: LEASE_TIMINGS.ttlMs - LEASE_TIMINGS.marginMs });

describeModel({
  machine: leaseMachine,
  serializeState,
  // Every transition from every kind of snapshot, and the longest walks up to a dozen: each path
  // makes real round trips to the broker and the store.
  simplePaths: { maxPaths: 12 },
  timeoutMs: 20_000,
  setup: () => LeaseRig.create(world),
  teardown: (rig) => rig.dispose(),
  events: {
    'xstate.done.actor.take': {
      samples: [taken],
      async drive(rig, _event, step) {
        await rig.keyFreed();
        await rig.held('take').go();
        await reaches(rig, step.to.value);
      },
    },
    'xstate.error.actor.take': {
      samples: {
        'held by a rival': errorEvent('take', { refused: true, message: 'the lease is held by rival:2' }),
        'a value no controller wrote': errorEvent('take', { refused: true, foreign: true, message: 'the lease key holds a value no controller wrote' }),
      },
      async drive(rig, event: { error: { foreign?: boolean } }, step) {
        if (event.error.foreign === true) await rig.strangerWrites();
        else await rig.rivalTakes();
        await rig.held('take').go().catch(() => undefined);
        await reaches(rig, step.to.value);
      },
    },
    [afterEventType('contendEvery', 'lease.contending')]: {
      async drive(rig, _event, step) {
        const calls = rig.ops.calls.length;
        rig.clock.increment(LEASE_TIMINGS.contendEveryMs - 1);
        await settle();
        expect(rig.ops.calls).toHaveLength(calls);
        rig.clock.increment(1);
        await reaches(rig, step.to.value);
      },
    },
    'lease.freed': {
      async drive(rig, _event, step) {
        // The rival (or whoever wrote a stranger's value) gives the key back; the actor hears it
        // through its watch, before any retry is due.
        const holder = await rig.holder();
        expect(['rival', 'stranger']).toContain(holder);
        if (holder === 'rival') await rig.rival.lease.release((await rig.rival.lease.current())?.revision ?? 0);
        else await rig.rival.bucket.kv.delete(LEASE_KEY);
        await reaches(rig, step.to.value);
      },
    },
    'controller.stopping': {
      async drive(rig, _event, step) {
        const before = rig.waiting();
        rig.actor.send({ type: 'controller.stopping' });
        for (const call of before) {
          // A take under way runs on, and gives back what it got; a renewal under way is forgotten.
          if (call.operation === 'take') {
            await rig.keyFreed();
            await call.go().catch(() => undefined);
          } else {
            call.drop();
          }
        }
        if (step.to.value === 'releasing') await reaches(rig, 'releasing');
        else await reaches(rig, step.to.value);
      },
    },
    [afterEventType('renewEvery', 'lease.holding.waiting')]: {
      async drive(rig, _event, step) {
        rig.clock.increment(LEASE_TIMINGS.renewEveryMs - 1);
        await settle();
        expect(rig.waiting()).toEqual([]);
        rig.clock.increment(1);
        await reaches(rig, step.to.value);
      },
    },
    'xstate.done.actor.renew': {
      samples: [renewed],
      async drive(rig, _event, step) {
        await rig.held('renew').go();
        await reaches(rig, step.to.value);
      },
    },
    'xstate.error.actor.renew': {
      samples: {
        refused: errorEvent('renew', { refused: true, message: 'the renewal was refused: the lease is held by rival:2' }),
        foreign: errorEvent('renew', { refused: true, foreign: true, message: 'the lease key holds a value no controller wrote' }),
        unreachable: errorEvent('renew', { refused: false, message: 'the lease could not be renewed: timeout' }),
      },
      async drive(rig, event: { error: { refused: boolean; foreign?: boolean } }, step) {
        const call = rig.held('renew');
        if (event.error.foreign === true) {
          await rig.strangerWrites();
          await call.go().catch(() => undefined);
          // The gate is shut at once and the loss is told, but the process is not told to exit.
          expect(rig.gate.isActing()).toBe(false);
          expect(rig.gate.standing().note).toContain('a value no controller wrote');
        } else if (event.error.refused) {
          await rig.rivalTakes();
          await call.go().catch(() => undefined);
        } else {
          rig.ours.proxy?.freeze();
          await call.go().catch(() => undefined);
          // The renewal timed out; once the link is back it lands, late, and is still this controller's.
          rig.ours.proxy?.thaw();
        }
        expect(call.result).toMatchObject({ error: { refused: event.error.refused } });
        await reaches(rig, step.to.value);
      },
    },
    [afterEventType('renewRetry', 'lease.holding.retrying')]: {
      async drive(rig, _event, step) {
        rig.clock.increment(LEASE_TIMINGS.renewRetryMs);
        await reaches(rig, step.to.value);
      },
    },
    'xstate.done.actor.release': {
      samples: [doneEvent('release', undefined)],
      async drive(rig, _event, step) {
        await rig.held('release').go();
        await reaches(rig, step.to.value);
      },
    },
    'xstate.error.actor.release': {
      samples: { 'taken by a rival': errorEvent('release', { refused: true, message: 'the lease was not given back: it is not this controller\'s any more' }) },
      async drive(rig, _event, step) {
        await rig.rivalTakes();
        await rig.held('release').go().catch(() => undefined);
        await reaches(rig, step.to.value);
      },
    },
  },
  states: {
    async taking(rig) {
      expect(rig.actor.getSnapshot().value).toBe('taking');
      expect(rig.held('take').released).toBe(false);
      expect(rig.gate.isActing()).toBe(false);
    },
    async contending(rig) {
      expect(rig.actor.getSnapshot().value).toBe('contending');
      expect(rig.waiting()).toEqual([]);
      const holder = await rig.holder();
      expect(['rival', 'stranger']).toContain(holder);
      expect(rig.gate.isActing()).toBe(false);
      // Standing by, saying who holds the key or that no controller wrote it; never told to exit.
      expect(rig.gate.standing()).toMatchObject({ state: 'standing by', note: expect.stringContaining(holder === 'rival' ? 'rival:2' : 'a value no controller wrote') });
      expect(rig.losses).toEqual([]);
    },
    async holding(rig) {
      const context = rig.actor.getSnapshot().context;
      const epoch = context.epoch as number;
      // The epoch is a revision the key was taken at, and the store's floor was raised to it.
      expect(rig.gate.epoch()).toBe(epoch);
      expect((await readEpochFloor(world.store))?.epoch).toBeGreaterThanOrEqual(epoch);
      expect(rig.gate.heldRevision()).toBe(context.revision);
    },
    async 'holding.waiting'(rig) {
      expect(rig.actor.getSnapshot().value).toEqual({ holding: 'waiting' });
      expect(await rig.holder()).toBe('ours');
      // Just written: acting for the age limit less the margin, measured from the write's send time.
      expect(rig.gate.isActing()).toBe(true);
      expect(rig.gate.standing().acting_for_ms).toBe(rig.actor.getSnapshot().context.actingUntil - rig.clock.now());
    },
    async 'holding.renewing'(rig) {
      expect(rig.actor.getSnapshot().value).toEqual({ holding: 'renewing' });
      expect(rig.held('renew').released).toBe(false);
      expect(await rig.holder()).toBe('ours');
    },
    async 'holding.retrying'(rig) {
      expect(rig.actor.getSnapshot().value).toEqual({ holding: 'retrying' });
      expect(rig.actor.getSnapshot().context.lastError).toMatch(/could not be renewed/);
      expect(rig.waiting()).toEqual([]);
      // The gate is the clock's: still open until the last good write's deadline, shut after it.
      expect(rig.gate.isActing()).toBe(rig.clock.now() < rig.actor.getSnapshot().context.actingUntil);
    },
    async releasing(rig) {
      expect(rig.actor.getSnapshot().value).toBe('releasing');
      expect(rig.held('release').released).toBe(false);
      expect(rig.gate.isActing()).toBe(false);
    },
    async released(rig) {
      expect(rig.actor.getSnapshot()).toMatchObject({ status: 'done', value: 'released' });
      expect(rig.waiting()).toEqual([]);
      expect(await rig.holder()).not.toBe('ours');
      expect(rig.gate.isActing()).toBe(false);
      expect(rig.losses).toEqual([]);
    },
    async lost(rig) {
      expect(rig.actor.getSnapshot()).toMatchObject({ status: 'done', value: 'lost' });
      expect(await rig.holder()).toBe('rival');
      expect(rig.gate.isActing()).toBe(false);
      expect(rig.gate.standing().state).toBe('lost');
      expect(rig.losses).toHaveLength(1);
      expect(rig.losses[0]).toBeInstanceOf(LeaseLost);
      expect(rig.losses[0]?.value).toContain('rival:2');
    },
  },
});
