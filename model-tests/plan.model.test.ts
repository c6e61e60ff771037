/**
 * The plan machine's paths, walked by the real plan actor (PlanBook and its PlanRunners, the
 * plan machine provided with the real sends) in a controller served in this process, over three
 * real machines running `nox-mesh-host` (a, b, c), a real broker and a real PostgreSQL store
 * (actors/controller/plans/testing/plan-world.ts). Every path opens a plan for the next version
 * of one module, running on all three machines.
 *
 * What the world adds to hold each step still: every send is held until its driver lets it go
 * (SendHold), first machines' reports are judged only when a driver asks (checkNow), and the
 * plans' waits run on a simulated clock. Everything else happens for real: the revision is
 * registered with module add and the plan opened by it; a send is composed, signed, published,
 * applied by the machine and reported on; a send that fails does so because the node's
 * composition really is refused (a hand-declared resource on the module's path), a first machine
 * that fails does so because a directory stands where the module's file goes and its host,
 * restarted, reports that; pushes are real pushes; a controller taking over is a new plan book
 * reading the plans back from the store. The assertions read the plan row, the runner, the held
 * sends, the revision each machine's declarations carry and the files on the machines.
 */
import type { SnapshotFrom } from 'xstate';
import { doneEvent, describeModel, afterEventType } from './harness';
import { planMachine, planStateOf, unsentTargets, type PlanContext, type PlanSend, type SendOutcome } from '../machines/plan.machine';
import { judgeFirstReport } from '../actors/controller/plans/judge-first-report';
import { pushNodes } from '../actors/controller/modules/push-nodes';
import { eventually } from '../actors/controller/serve/testing/eventually';
import { MODEL_WAIT_MS, PlanWorld } from '../actors/controller/plans/testing/plan-world';

type Snapshot = SnapshotFrom<typeof planMachine>;

interface System {
  world: PlanWorld;
  /** The plan the path opened. */
  plan: number | null;
  /** The plan that superseded it. */
  superseder: number | null;
  /** The versions of the module before the path's revision, and the path's revision. */
  before: string;
  version: string;
}

let world: PlanWorld | undefined;
const logs: string[] = [];

beforeAll(async () => {
  world = await PlanWorld.start((line) => logs.push(line));
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

function worldOf(): PlanWorld {
  if (world === undefined) throw new Error('the plan world did not start');
  return world;
}

function planOf(system: System): number {
  if (system.plan === null) throw new Error('no plan was opened on this path');
  return system.plan;
}

const SEND: PlanSend = { generation: 1, digest: '0'.repeat(64), at: '2026-01-01T00:00:00.000Z' };
const TARGETS = ['a', 'b', 'c'];
const outcome = (parts: Partial<SendOutcome>): SendOutcome => ({ sent: {}, failed: {}, skipped: {}, ...parts });
const WAIT = afterEventType('firstReportWait', 'plan.open.awaitingFirst');

/** Waits until the real plan is where the model says: its row, and its runner while it has one. */
async function reaches(system: System, snapshot: Snapshot): Promise<void> {
  const id = planOf(system);
  const want = planStateOf(snapshot.value);
  let seen = '';
  await eventually(`plan ${id} to be ${want}`, async () => {
    const row = await system.world.row(id);
    const running = system.world.runner(id)?.state();
    seen = `row ${row.state}, runner ${running ?? 'none'}`;
    return row.state === want && (running === undefined || running === want);
  }, { timeoutMs: 15_000, seen: () => seen });
}

/** A note's shape: its words before the first colon, numbers left out (plan ids, generations differ). */
function noteShape(note: string | null): string | null {
  return note === null ? null : (note.split(':')[0] ?? '').replace(/\d+/g, 'N');
}

function expectContext(real: PlanContext, modelled: PlanContext): void {
  const shape = (context: PlanContext) => ({
    policy: context.policy,
    targets: context.targets,
    first: context.first,
    sent: Object.keys(context.sent).sort(),
    failed: Object.keys(context.failed).sort(),
    skipped: Object.keys(context.skipped).sort(),
    firstApplied: context.firstApplied,
    resendFirst: context.resendFirst,
    note: noteShape(context.note),
    superseded: context.supersededBy !== null,
  });
  expect(shape(real)).toEqual(shape(modelled));
}

// Snapshots that behave alike are one vertex: where the plan is, its policy, and whether the
// first machine applied or is to be sent again. Which nodes are sent is checked at every step but
// left out of the vertex: kept in, it multiplies the paths threefold (139 against 49) without
// reaching a transition or guard the 49 do not, and each step moves real declarations.
function serializeState(snapshot: Snapshot): string {
  const { context } = snapshot;
  return JSON.stringify([snapshot.value, context.policy, context.firstApplied, context.resendFirst]);
}

describeModel({
  machine: planMachine,
  serializeState,
  // The transition paths walk every transition from every kind of snapshot; each step moves
  // real declarations through real machines.
  simplePaths: false,
  timeoutMs: 60_000,
  async setup(): Promise<System> {
    const current = worldOf();
    await current.settle();
    return { world: current, plan: null, superseder: null, before: String(current.version), version: String(current.version) };
  },
  events: {
    'plan.opened': {
      samples: {
        'one-first': { type: 'plan.opened', policy: 'one-first', targets: TARGETS, first: 'a' },
        together: { type: 'plan.opened', policy: 'together', targets: TARGETS, first: null },
        record: { type: 'plan.opened', policy: 'record', targets: TARGETS, first: null },
      },
      async drive(system, event, step) {
        const added = await system.world.addRevision(event.policy);
        expect(added.plan).toMatchObject({ first: event.first, targets: event.targets });
        system.plan = added.plan?.id ?? null;
        system.version = added.version;
        await reaches(system, step.to);
      },
    },
    'xstate.done.actor.sendFirst': {
      samples: {
        sent: doneEvent('sendFirst', outcome({ sent: { a: SEND } })),
        'not sent': doneEvent('sendFirst', outcome({ failed: { a: 'the declaration could not be composed' } })),
      },
      async drive(system, event, step) {
        const failing = Object.keys(event.output.failed).length > 0;
        if (failing) await system.world.breakComposition('a');
        expect(system.world.hold.release(planOf(system), ['a'])).toEqual(['a']);
        await reaches(system, step.to);
        if (failing) {
          await system.world.repairComposition('a');
          expect(system.world.runner(planOf(system))?.context().failed.a).toMatch(/resource key|\/srv\/m\/version/);
        }
      },
    },
    'xstate.done.actor.sendRest': {
      samples: {
        'all sent': doneEvent('sendRest', outcome({ sent: { a: SEND, b: SEND, c: SEND } })),
        'c not sent': doneEvent('sendRest', outcome({ sent: { a: SEND, b: SEND }, failed: { c: 'the declaration could not be composed' } })),
      },
      async drive(system, event, step) {
        const failing = Object.keys(event.output.failed).length > 0;
        if (failing) await system.world.breakComposition('c');
        const wanted = unsentTargets(step.from.context);
        await eventually('every send of the plan to be held', () => wanted.every((node) => system.world.hold.heldFor(planOf(system)).includes(node)));
        // A node a push sent meanwhile is let go too: its send finds it sent and sends nothing.
        expect(system.world.hold.release(planOf(system))).toEqual(expect.arrayContaining(wanted));
        await reaches(system, step.to);
        if (failing) await system.world.repairComposition('c');
      },
    },
    'first.applied': {
      async drive(system, _event, step) {
        const send = system.world.runner(planOf(system))?.context().sent.a;
        if (send === undefined) throw new Error('the first machine was not sent');
        await eventually('machine a to report on its send', async () => (await judgeFirstReport(system.world.serving.ctx.store, 'a', send))?.kind === 'applied');
        await system.world.book.checkNow();
        await reaches(system, step.to);
      },
    },
    'first.failed': {
      samples: [{ type: 'first.failed', reason: 'file:/srv/m/version failed' }],
      async drive(system, _event, step) {
        const send = system.world.runner(planOf(system))?.context().sent.a;
        if (send === undefined) throw new Error('the first machine was not sent');
        await system.world.failOnMachine('a');
        await eventually('machine a to report the failure', async () => (await judgeFirstReport(system.world.serving.ctx.store, 'a', send))?.kind === 'failed', { timeoutMs: 15_000 });
        await system.world.book.checkNow();
        await reaches(system, step.to);
        expect((await system.world.row(planOf(system))).note).toMatch(/^the first machine, a, did not apply the revision: file:\/srv\/m\/version failed \(a directory is at \/srv\/m\/version/);
        await system.world.repairMachine('a');
      },
    },
    [WAIT]: {
      async drive(system, _event, step) {
        // Half the wait: not yet (the wait is counted from the send, less what passed since).
        system.world.clock.increment(MODEL_WAIT_MS / 2);
        await new Promise((resolve) => setImmediate(resolve));
        expect(system.world.runner(planOf(system))?.state()).toBe('awaitingFirst');
        system.world.clock.increment(MODEL_WAIT_MS / 2);
        await reaches(system, step.to);
      },
    },
    'nodes.pushed': {
      samples: {
        b: { type: 'nodes.pushed', sent: { b: SEND } },
        everyone: { type: 'nodes.pushed', sent: { a: SEND, b: SEND, c: SEND } },
      },
      async drive(system, event, step) {
        for (const node of Object.keys(event.sent)) {
          const pushed = await pushNodes(system.world.serving.ctx, system.world.book, { node });
          expect(pushed.nodes[0]?.sent?.modules.m).toBe(system.version);
        }
        await reaches(system, step.to);
      },
    },
    'operator.close': {
      async drive(system, _event, step) {
        await system.world.book.close(planOf(system));
        await reaches(system, step.to);
      },
    },
    'operator.retry': {
      async drive(system, _event, step) {
        await system.world.book.retry(planOf(system));
        await reaches(system, step.to);
      },
    },
    'plan.superseded': {
      samples: [{ type: 'plan.superseded', by: 99 }],
      async drive(system, _event, step) {
        const newer = await system.world.addRevision('one-first');
        expect(newer.superseded).toEqual([planOf(system)]);
        system.superseder = newer.plan?.id ?? null;
        await reaches(system, step.to);
        // The newer plan is not this path's: closed at once, its first send never let go.
        if (system.superseder !== null) await system.world.book.close(system.superseder);
      },
    },
    'controller.resumed': {
      async drive(system, _event, step) {
        await system.world.restartBook();
        await reaches(system, step.to);
      },
    },
  },
  states: {
    async opening(system) {
      expect(system.world.book.runners()).toEqual([]);
      const pins = await system.world.pins();
      expect(pins).toEqual({ a: system.before, b: system.before, c: system.before });
    },
    async open(system, snapshot) {
      const id = planOf(system);
      const row = await system.world.row(id);
      expect(row.ended_at).toBeNull();
      const runner = system.world.runner(id);
      expect(runner).toBeDefined();
      expectContext(runner?.context() as PlanContext, snapshot.context);
      // What the store holds is what the runner holds: each step is written before the next.
      await runner?.settled();
      expectContext((await system.world.row(id)).context, snapshot.context);
    },
    async 'open.held'(system, snapshot) {
      expect(system.world.hold.heldFor(planOf(system))).toEqual([]);
      const pins = await system.world.pins();
      for (const node of TARGETS) expect([node, pins[node]]).toEqual([node, snapshot.context.sent[node] === undefined ? system.before : system.version]);
    },
    async 'open.sendingFirst'(system) {
      await eventually('the first machine\'s send to be held', () => system.world.hold.heldFor(planOf(system)).length > 0);
      expect(system.world.hold.heldFor(planOf(system))).toEqual(['a']);
    },
    async 'open.awaitingFirst'(system, snapshot) {
      expect(system.world.hold.heldFor(planOf(system))).toEqual([]);
      const pins = await system.world.pins();
      expect(pins.a).toBe(system.version);
      for (const node of ['b', 'c']) expect([node, pins[node]]).toEqual([node, snapshot.context.sent[node] === undefined ? system.before : system.version]);
      await system.world.machinesRead(['a'], system.version);
    },
    async 'open.sending'(system, snapshot) {
      const wanted = unsentTargets(snapshot.context);
      await eventually('the sends to the nodes not yet sent to be held', () => wanted.every((node) => system.world.hold.heldFor(planOf(system)).includes(node)));
      // Held besides them: only nodes sent since the sending began (by a push).
      for (const node of system.world.hold.heldFor(planOf(system))) expect([node, wanted.includes(node) || snapshot.context.sent[node] !== undefined]).toEqual([node, true]);
    },
    async 'open.stopped'(system, snapshot) {
      expect(system.world.hold.heldFor(planOf(system))).toEqual([]);
      const row = await system.world.row(planOf(system));
      expect(noteShape(row.note)).toBe(noteShape(snapshot.context.note));
      const pins = await system.world.pins();
      for (const node of TARGETS) expect([node, pins[node]]).toEqual([node, snapshot.context.sent[node] === undefined ? system.before : system.version]);
    },
    async done(system, snapshot) {
      const row = await system.world.row(planOf(system));
      expect(row.ended_at).not.toBeNull();
      expectContext(row.context, snapshot.context);
      expect(system.world.runner(planOf(system))).toBeUndefined();
      expect(await system.world.pins()).toEqual({ a: system.version, b: system.version, c: system.version });
      await system.world.machinesRead(TARGETS, system.version);
    },
    async closed(system, snapshot) {
      const row = await system.world.row(planOf(system));
      expect(row.note).toBe('closed by hand');
      expectContext(row.context, snapshot.context);
      expect(system.world.hold.heldFor(planOf(system))).toEqual([]);
      const pins = await system.world.pins();
      for (const node of TARGETS) expect([node, pins[node]]).toEqual([node, snapshot.context.sent[node] === undefined ? system.before : system.version]);
    },
    async superseded(system, snapshot) {
      const row = await system.world.row(planOf(system));
      expect(row.superseded_by).toBe(system.superseder);
      expectContext(row.context, snapshot.context);
      expect(system.world.runner(planOf(system))).toBeUndefined();
    },
  },
});
