/**
 * The supervisor machine's paths, walked by the real controller tree.
 *
 * Each path serves a real controller (`serveController`: bus, store, lease, broker users, every
 * part, status, control) over a real broker and a real PostgreSQL, with the model's limits as the
 * root's limits and a simulated clock as the actor system's clock. One slot of that root is the
 * model's slot: a child `worker` put under the root beside the controller's own children, a
 * FakeChild the drivers fail or finish on command (a service of the controller cannot end
 * cleanly on command: it runs until it fails or is stopped). The paths are walked once with the
 * worker permanent, as the controller's services are (a clean end is restarted, and escalates like
 * a failure), and once transient, as the lease is (a clean end ends its slot only).
 *
 * What is real here, and asserted at every state: the root and its limits, the tree as
 * `mesh-control tree` answers it over the bus, the siblings that keep running while the worker
 * fails (one-for-one), and on escalation the whole controller ending with SupervisorEscalated
 * naming the worker and its last error, its lease given back.
 */
import { SimulatedClock } from 'xstate';
import type { AnyActorRef } from 'xstate';
import { supervisorMachine } from '../machines/supervisor.machine';
import { limitText } from '../machines/supervisor.machine';
import type { RestartPolicy, SupervisorInput } from '../machines/supervisor.machine';
import { FakeChild, settle } from '../actors/shared/supervisor/fake-child';
import type { SupervisionTreeNode } from '../actors/shared/supervisor/describe-tree';
import { SupervisorEscalated } from '../actors/shared/supervisor/supervisor-escalated';
import type { OperatorError } from '../actors/shared/operator-error';
import { callController } from '../actors/controller/control/call-controller';
import { serveController } from '../actors/controller/serve/serve-controller';
import type { ServingController } from '../actors/controller/serve/serve-controller';
import { useTestMesh } from '../actors/controller/serve/testing/use-test-mesh';
import { describeModel } from './harness';
import { supervisorSlotEvents } from './rigs/supervisor-slot-events';

const input: Omit<SupervisorInput, 'restart'> = {
  child: 'worker',
  maxRestarts: 2,
  windowMs: 1_000,
  // The second restart would wait 200 ms: the cap of 150 ms is on the paths too.
  backoff: { baseMs: 100, maxMs: 150 },
};

const inputs: Record<RestartPolicy, SupervisorInput> = {
  permanent: { ...input, restart: 'permanent' },
  transient: { ...input, restart: 'transient' },
};

const suite = useTestMesh();

interface Rig {
  clock: SimulatedClock;
  child: FakeChild;
  serving: ServingController;
  /** The controller's own children, as the tree listed them when it started. */
  siblings: string[];
  /** Incarnations the model says have been started so far. */
  started: number;
}

function slotOf(rig: Rig): AnyActorRef {
  const slot = rig.serving.root.actor.getSnapshot().children[input.child] as AnyActorRef | undefined;
  if (slot === undefined) throw new Error('the controller tree has no slot for the worker any more');
  return slot;
}

function nodeOf(tree: SupervisionTreeNode, id: string): SupervisionTreeNode {
  const node = tree.children.find((child) => child.id === id);
  if (node === undefined) throw new Error(`the tree has no ${id}: ${JSON.stringify(tree)}`);
  return node;
}

/** The tree as an operator sees it: asked over the bus, the way `mesh-control tree` asks. */
async function servedTree(): Promise<{ tree: SupervisionTreeNode; text: string }> {
  const answer = await callController(suite.mesh.dir, 'tree', {});
  return { tree: answer.result as SupervisionTreeNode, text: answer.text };
}

/** How the controller ended, once it has; undefined while it serves. */
async function endedWith(rig: Rig): Promise<OperatorError | undefined> {
  return Promise.race([rig.serving.ended, settle().then(() => undefined)]);
}

/** The worker's slot is in `state` and every one of the controller's own children runs beside it. */
async function expectServedWithWorker(rig: Rig, state: string, snapshot: { context: { recentRestarts: number; lastError: string | undefined } }): Promise<void> {
  const { tree, text } = await servedTree();
  expect(tree.state).toBe('supervising');
  const worker = nodeOf(tree, input.child);
  expect(worker.state).toBe(state);
  expect(worker.restarts).toBe(snapshot.context.recentRestarts);
  expect(worker.last_error).toBe(snapshot.context.lastError);
  expect(text).toMatch(new RegExp(`└─ worker +${state}`));
  for (const sibling of rig.siblings) expect(`${sibling} ${nodeOf(tree, sibling).state}`).toBe(`${sibling} running`);
  expect(rig.serving.lease.isActing()).toBe(true);
  expect(await endedWith(rig)).toBeUndefined();
}

describeModel({
  machine: supervisorMachine,
  name: 'supervisor on the controller tree',
  coverageFile: '.test-results/model-coverage/supervisor-controller-tree.json',
  inputs,
  // Every path serves a whole controller: the transition paths (each reachable transition, from
  // each input) are walked here; the many simple paths run in supervisor.model.test.ts.
  simplePaths: false,
  timeoutMs: 30_000,
  async setup(given): Promise<Rig> {
    const restart = given?.restart;
    if (restart === undefined) throw new Error('every path starts from one of the inputs');
    const clock = new SimulatedClock();
    const child = new FakeChild();
    const serving = await serveController(suite.mesh.dir, {
      clock,
      supervision: { maxRestarts: input.maxRestarts, windowMs: input.windowMs, backoff: input.backoff },
      extraChildren: [{ id: input.child, logic: child.logic, restart }],
      log: () => undefined,
    });
    const siblings = serving.tree().children.map((node) => node.id).filter((id) => id !== input.child);
    return { clock, child, serving, siblings, started: 1 };
  },
  async teardown(rig) {
    await rig.serving.stop();
  },
  events: supervisorSlotEvents<Rig>(input, { slot: slotOf, node: (rig) => nodeOf(rig.serving.tree(), input.child) }),
  states: {
    async running(rig, snapshot) {
      await expectServedWithWorker(rig, 'running', snapshot);
      expect(rig.child.incarnations).toHaveLength(rig.started);
      expect(rig.child.running).toBe(1);
    },
    async backingOff(rig, snapshot) {
      await expectServedWithWorker(rig, 'backingOff', snapshot);
      expect(rig.child.running).toBe(0);
    },
    async escalated(rig, snapshot) {
      const ended = await rig.serving.ended;
      expect(ended).toBeInstanceOf(SupervisorEscalated);
      expect((ended as SupervisorEscalated).report).toMatchObject({ child: input.child, error: snapshot.context.lastError });
      expect(ended.message).toBe(`supervisor "controller" gave up on child "worker" after ${limitText(input)}; last error: ${JSON.stringify(snapshot.context.lastError)}`);
      expect(ended.exitCode).toBe(1);
      expect(rig.child.running).toBe(0);
      // The whole controller stopped: no child of the root is alive, and the lease was given back.
      expect(Object.keys(rig.serving.root.actor.getSnapshot().children)).toEqual([]);
      expect(rig.serving.lease.isActing()).toBe(false);
      expect(rig.serving.lease.heldRevision()).toBeNull();
    },
    async stopped(rig) {
      // The worker's work is over; the controller and every other child serve on.
      const { tree } = await servedTree();
      expect(tree.state).toBe('supervising');
      expect(nodeOf(tree, input.child).state).toBe('stopped');
      for (const sibling of rig.siblings) expect(`${sibling} ${nodeOf(tree, sibling).state}`).toBe(`${sibling} running`);
      expect(rig.child.running).toBe(0);
      expect(rig.child.incarnations).toHaveLength(rig.started);
      expect(await endedWith(rig)).toBeUndefined();
    },
  },
});
