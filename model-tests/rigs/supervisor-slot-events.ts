/**
 * The drivers of the supervisor machine's events, shared by every rig that walks its paths: a
 * root supervisor over a FakeChild (supervisor.model.test.ts) and the real controller tree
 * (supervisor-controller-tree.model.test.ts). Each rig says where its slot is and how to read
 * the slot's node in its live tree; the drivers fail or finish the fake child, stop the slot,
 * and step the simulated clock through the backoff and the restart window, checking at one
 * millisecond short of each that nothing has happened yet.
 */
import type { AnyActorRef, SimulatedClock } from 'xstate';
import { restartDelay, type SupervisorInput } from '../../machines/supervisor.machine';
import { settle, type FakeChild } from '../../actors/shared/supervisor/fake-child';
import type { SupervisionTreeNode } from '../../actors/shared/supervisor/describe-tree';
import { afterEventType, doneEvent, errorEvent } from '../harness';
import type { ModelTransition } from '../harness';
import type { supervisorMachine } from '../../machines/supervisor.machine';

/** What the drivers need of a rig. */
export interface SlotRig {
  clock: SimulatedClock;
  child: FakeChild;
  /** Incarnations the model says have been started so far. */
  started: number;
}

/** Where a rig's slot is, and its node in the rig's live tree. */
export interface SlotAccess<TRig extends SlotRig> {
  slot(rig: TRig): AnyActorRef;
  node(rig: TRig): SupervisionTreeNode;
}

type Step = ModelTransition<typeof supervisorMachine>;

/** The event entries of a supervisor model spec, for a slot started with `input`'s limits. */
export function supervisorSlotEvents<TRig extends SlotRig>(input: Pick<SupervisorInput, 'backoff' | 'windowMs'>, access: SlotAccess<TRig>) {
  return {
    'xstate.error.actor.child': {
      samples: { 'connection refused': errorEvent('child', new Error('connection refused')) },
      async drive(rig: TRig, event: { error: Error }) {
        rig.child.current.fail(event.error.message);
        await settle();
      },
    },
    // A normal exit: the end of a transient child's work, restarted for a permanent one.
    'xstate.done.actor.child': {
      samples: [doneEvent('child', undefined)],
      async drive(rig: TRig) {
        rig.child.current.finish();
        await settle();
      },
    },
    'supervisor.stop': {
      async drive(rig: TRig) {
        const running = rig.child.current;
        const wasRunning = !running.ended && !running.stopped;
        access.slot(rig).send({ type: 'supervisor.stop' });
        await settle();
        // A running incarnation is stopped, not left behind: its cleanup ran.
        if (wasRunning) expect(running.stopped).toBe(true);
      },
    },
    [afterEventType('restartDelay', 'supervisor.backingOff')]: {
      drive(rig: TRig, _event: unknown, step: Step) {
        const delay = restartDelay(input.backoff, step.from.context.recentRestarts);
        rig.clock.increment(delay - 1);
        expect(rig.child.incarnations).toHaveLength(rig.started);
        rig.clock.increment(1);
        rig.started += 1;
      },
    },
    [afterEventType('restartWindow', 'supervisor.running')]: {
      drive(rig: TRig, _event: unknown, step: Step) {
        rig.clock.increment(input.windowMs - 1);
        expect(access.node(rig).restarts).toBe(step.from.context.recentRestarts);
        rig.clock.increment(1);
      },
    },
  };
}
