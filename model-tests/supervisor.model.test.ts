/**
 * The supervisor machine's paths, walked by the real supervision helper.
 *
 * Each path gets a fresh root supervisor from actors/shared/supervisor (`supervise` +
 * `runRootSupervisor`) with one child, a FakeChild the drivers fail or finish on command, on a
 * simulated clock, with the process exit replaced by a recorder. The model's slot is the root's
 * slot for that child: drivers make its child fail or end, advance the clock through the backoff
 * and the restart window, and send it `supervisor.stop`; assertions read the live tree
 * (`describeTree`), the fake child's incarnations and the recorded exit.
 *
 * The paths are walked once with the child permanent (a clean end is restarted, and escalates
 * like a failure) and once transient (a clean end ends the slot, and with it the root).
 */
import { SimulatedClock } from 'xstate';
import type { AnyActorRef } from 'xstate';
import { supervisorMachine } from '../machines/supervisor.machine';
import type { RestartPolicy, SupervisorInput } from '../machines/supervisor.machine';
import { FakeChild, settle } from '../actors/shared/supervisor/fake-child';
import { runRootSupervisor } from '../actors/shared/supervisor/run-root-supervisor';
import type { RootOutcome, RootSupervisor } from '../actors/shared/supervisor/run-root-supervisor';
import { supervise } from '../actors/shared/supervisor/supervise';
import type { SupervisionTreeNode } from '../actors/shared/supervisor/describe-tree';
import { describeModel } from './harness';
import { supervisorSlotEvents } from './rigs/supervisor-slot-events';

const input: Omit<SupervisorInput, 'restart'> = {
  child: 'worker',
  maxRestarts: 2,
  windowMs: 1_000,
  // The second restart would wait 200 ms: the cap of 150 ms is on the paths too.
  backoff: { baseMs: 100, maxMs: 150 },
};

interface Rig {
  clock: SimulatedClock;
  child: FakeChild;
  root: RootSupervisor;
  exits: Array<{ code: number; message: string }>;
  /** Incarnations the model says have been started so far. */
  started: number;
}

/** The root supervisor's slot for the worker: the real actor the model describes. */
function slotOf(rig: Rig): AnyActorRef {
  const slot = rig.root.actor.getSnapshot().children[input.child] as AnyActorRef | undefined;
  if (slot === undefined) throw new Error('the root supervisor has no slot for the worker any more');
  return slot;
}

function workerNode(rig: Rig): SupervisionTreeNode {
  const node = rig.root.tree().children.find((child) => child.id === input.child);
  if (node === undefined) throw new Error(`the tree has no ${input.child}: ${JSON.stringify(rig.root.tree())}`);
  return node;
}

/** The root's outcome, once it has ended; undefined while it runs. */
async function outcomeOf(rig: Rig): Promise<RootOutcome | undefined> {
  return Promise.race([rig.root.done, settle().then(() => undefined)]);
}

const inputs: Record<RestartPolicy, SupervisorInput> = {
  permanent: { ...input, restart: 'permanent' },
  transient: { ...input, restart: 'transient' },
};

describeModel({
  machine: supervisorMachine,
  inputs,
  setup(given): Rig {
    const restart = given?.restart;
    if (restart === undefined) throw new Error('every path starts from one of the inputs');
    const clock = new SimulatedClock();
    const child = new FakeChild();
    const exits: Rig['exits'] = [];
    const root = runRootSupervisor(
      supervise({
        name: 'model',
        maxRestarts: input.maxRestarts,
        windowMs: input.windowMs,
        backoff: input.backoff,
        children: [{ id: input.child, logic: child.logic, restart }],
      }),
      { clock, exit: (code, message) => exits.push({ code, message }) },
    );
    return { clock, child, root, exits, started: 1 };
  },
  teardown(rig) {
    rig.root.actor.stop();
  },
  events: supervisorSlotEvents<Rig>(input, { slot: slotOf, node: workerNode }),
  states: {
    async running(rig, snapshot) {
      const node = workerNode(rig);
      expect(node.state).toBe('running');
      expect(node.restarts).toBe(snapshot.context.recentRestarts);
      expect(node.last_error).toBe(snapshot.context.lastError);
      expect(rig.child.incarnations).toHaveLength(rig.started);
      expect(rig.child.running).toBe(1);
      expect(await outcomeOf(rig)).toBeUndefined();
    },
    async backingOff(rig, snapshot) {
      const node = workerNode(rig);
      expect(node.state).toBe('backingOff');
      expect(node.restarts).toBe(snapshot.context.recentRestarts);
      expect(node.last_error).toBe(snapshot.context.lastError);
      expect(rig.child.running).toBe(0);
      expect(await outcomeOf(rig)).toBeUndefined();
    },
    async escalated(rig, snapshot) {
      expect(await outcomeOf(rig)).toMatchObject({ outcome: 'escalated', child: input.child, error: snapshot.context.lastError });
      expect(rig.child.running).toBe(0);
      expect(rig.exits).toHaveLength(1);
      expect(rig.exits[0]?.code).toBe(1);
      expect(rig.exits[0]?.message).toContain(`gave up on child "${input.child}"`);
      expect(rig.exits[0]?.message).toContain(String(snapshot.context.lastError));
    },
    async stopped(rig) {
      expect(await outcomeOf(rig)).toEqual({ outcome: 'stopped', child: 'model' });
      expect(rig.child.running).toBe(0);
      expect(rig.child.incarnations).toHaveLength(rig.started);
      expect(rig.exits).toEqual([]);
    },
  },
});
