import { createActor, fromPromise, initialTransition, SimulatedClock, transition } from 'xstate';
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import { ENDED_PLAN_STATES, FIRST_REPORT_WAIT_MS, planMachine, planStateOf, planStateValue, unsentTargets } from './plan.machine';
import type { PlanSend, SendFirstInput, SendOutcome, SendRestInput } from './plan.machine';

type Snapshot = SnapshotFrom<typeof planMachine>;

const send = (generation: number): PlanSend => ({ generation, digest: 'a'.repeat(64), at: '2026-12-01T10:00:00.000Z' });
const outcome = (parts: Partial<SendOutcome>): SendOutcome => ({ sent: {}, failed: {}, skipped: {}, ...parts });

const opened = (policy: 'one-first' | 'together' | 'record'): AnyEventObject => ({
  type: 'plan.opened',
  policy,
  targets: ['charlie', 'alpha', 'bravo'],
  first: policy === 'one-first' ? 'alpha' : null,
});
const firstSent = (result: SendOutcome): AnyEventObject => ({ type: 'xstate.done.actor.sendFirst', actorId: 'sendFirst', output: result });
const restSent = (result: SendOutcome): AnyEventObject => ({ type: 'xstate.done.actor.sendRest', actorId: 'sendRest', output: result });
const WAIT = { type: 'xstate.after.firstReportWait.plan.open.awaitingFirst' };

function walk(events: AnyEventObject[]): Snapshot {
  let [snapshot] = initialTransition(planMachine);
  for (const event of events) [snapshot] = transition(planMachine, snapshot, event as never);
  return snapshot;
}

const state = (snapshot: Snapshot): string => planStateOf(snapshot.value);

describe('plan machine', () => {
  test('one-first sends the first machine alone, then waits for its report', () => {
    expect(state(walk([opened('one-first')]))).toBe('sendingFirst');
    const waiting = walk([opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } }))]);
    expect(state(waiting)).toBe('awaitingFirst');
    expect(waiting.context.sent).toEqual({ alpha: send(7) });
    expect(unsentTargets(waiting.context)).toEqual(['bravo', 'charlie']);
  });

  test('the rest follow only once the first machine applied, and the plan is done when they are sent', () => {
    const first = [opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } }))];
    expect(state(walk([...first, { type: 'first.applied' }]))).toBe('sending');
    const done = walk([...first, { type: 'first.applied' }, restSent(outcome({ sent: { bravo: send(3), charlie: send(4) } }))]);
    expect(state(done)).toBe('done');
    expect(done.status).toBe('done');
    expect(Object.keys(done.context.sent).sort()).toEqual(['alpha', 'bravo', 'charlie']);
  });

  test('a failed first machine stops the plan, and the note names it and why', () => {
    const stopped = walk([opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } })), { type: 'first.failed', reason: 'file:/etc/app.conf failed' }]);
    expect(state(stopped)).toBe('stopped');
    expect(stopped.context.note).toBe('the first machine, alpha, did not apply the revision: file:/etc/app.conf failed');
  });

  test('a silent first machine stops the plan once the wait is over', () => {
    const stopped = walk([opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } })), WAIT]);
    expect(state(stopped)).toBe('stopped');
    expect(stopped.context.note).toBe('the first machine, alpha, did not report on the send within the wait');
  });

  test('a first machine that could not be sent stops the plan, naming why', () => {
    const stopped = walk([opened('one-first'), firstSent(outcome({ failed: { alpha: 'node alpha is being released' } }))]);
    expect(state(stopped)).toBe('stopped');
    expect(stopped.context.note).toBe('the first machine, alpha, could not be sent the revision: node alpha is being released');
    expect(stopped.context.failed).toEqual({ alpha: 'node alpha is being released' });
  });

  test('retry sends the first machine again while it has not applied, and the others once it has', () => {
    const silent = [opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } })), WAIT];
    const again = walk([...silent, { type: 'operator.retry' }]);
    expect(state(again)).toBe('sendingFirst');
    expect(again.context.note).toBeNull();
    // Sent again even though its last declaration carries the revision: it must apply and report anew.
    expect(again.context.resendFirst).toBe(true);
    expect(walk([...silent, { type: 'operator.retry' }, firstSent(outcome({ sent: { alpha: send(8) } }))]).context.resendFirst).toBe(false);

    const partly = [opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } })), { type: 'first.applied' }, restSent(outcome({ sent: { bravo: send(3) }, failed: { charlie: 'the broker did not answer' } }))];
    const stopped = walk(partly);
    expect(state(stopped)).toBe('stopped');
    expect(stopped.context.note).toBe('not every node could be sent the revision: charlie (the broker did not answer)');
    const retried = walk([...partly, { type: 'operator.retry' }]);
    expect(state(retried)).toBe('sending');
    expect(unsentTargets(retried.context)).toEqual(['charlie']);
    const finished = walk([...partly, { type: 'operator.retry' }, restSent(outcome({ sent: { charlie: send(9) } }))]);
    expect(state(finished)).toBe('done');
    expect(finished.context.failed).toEqual({});
  });

  test('together sends every node at once', () => {
    const sending = walk([opened('together')]);
    expect(state(sending)).toBe('sending');
    expect(sending.context.first).toBeNull();
    expect(unsentTargets(sending.context)).toEqual(['alpha', 'bravo', 'charlie']);
  });

  test('record holds until pushes have sent every node', () => {
    const held = walk([opened('record')]);
    expect(state(held)).toBe('held');
    const partly = walk([opened('record'), { type: 'nodes.pushed', sent: { bravo: send(5) } }]);
    expect(state(partly)).toBe('held');
    expect(unsentTargets(partly.context)).toEqual(['alpha', 'charlie']);
    const done = walk([opened('record'), { type: 'nodes.pushed', sent: { bravo: send(5) } }, { type: 'nodes.pushed', sent: { alpha: send(6), charlie: send(2) } }]);
    expect(state(done)).toBe('done');
    expect(done.context.note).toBe('every node was sent the revision by a push');
  });

  test('a person may close any plan that is open, and a newer plan supersedes it', () => {
    for (const events of [[opened('record')], [opened('one-first')], [opened('one-first'), firstSent(outcome({ sent: { alpha: send(7) } }))], [opened('together')]]) {
      const closed = walk([...events, { type: 'operator.close' }]);
      expect(state(closed)).toBe('closed');
      expect(closed.context.note).toBe('closed by hand');
      const superseded = walk([...events, { type: 'plan.superseded', by: 12 }]);
      expect(state(superseded)).toBe('superseded');
      expect(superseded.context.supersededBy).toBe(12);
    }
  });

  test('an ended plan takes nothing more', () => {
    const closed = walk([opened('record'), { type: 'operator.close' }]);
    for (const event of [{ type: 'operator.retry' }, { type: 'nodes.pushed', sent: { alpha: send(1) } }, { type: 'plan.superseded', by: 3 }]) {
      const [after] = transition(planMachine, closed, event as never);
      expect(state(after)).toBe('closed');
    }
  });

  test('a resumed plan starts its send again, and its wait keeps the time already spent', async () => {
    const clock = new SimulatedClock();
    const firstInputs: SendFirstInput[] = [];
    const restInputs: SendRestInput[] = [];
    const spent = 4 * 60 * 1000;
    const logic = planMachine.provide({
      actors: {
        sendFirst: fromPromise<SendOutcome, SendFirstInput>(async ({ input }) => {
          firstInputs.push(input);
          return outcome({ sent: { [input.node]: send(11) } });
        }),
        sendRest: fromPromise<SendOutcome, SendRestInput>(async ({ input }) => {
          restInputs.push(input);
          return outcome({});
        }),
      },
      delays: { firstReportWait: () => FIRST_REPORT_WAIT_MS - spent },
    });
    // Restored as the store holds it: no send runs and no timer is set until it is resumed.
    const restored = logic.resolveState({ value: planStateValue('sendingFirst'), context: walk([opened('one-first')]).context });
    const actor = createActor(logic, { snapshot: restored, clock });
    actor.start();
    await Promise.resolve();
    expect(firstInputs).toEqual([]);
    actor.send({ type: 'controller.resumed' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(firstInputs).toEqual([{ node: 'alpha', resend: false }]);
    expect(planStateOf(actor.getSnapshot().value)).toBe('awaitingFirst');
    clock.increment(FIRST_REPORT_WAIT_MS - spent - 1);
    expect(planStateOf(actor.getSnapshot().value)).toBe('awaitingFirst');
    clock.increment(1);
    expect(planStateOf(actor.getSnapshot().value)).toBe('stopped');
    expect(restInputs).toEqual([]);
    actor.stop();
  });

  test('names its states one way for the store and the CLI', () => {
    expect(planStateValue('held')).toEqual({ open: 'held' });
    expect(planStateValue('opening')).toBe('opening');
    for (const ended of ENDED_PLAN_STATES) expect(planStateValue(ended)).toBe(ended);
    expect(planStateOf({ open: 'awaitingFirst' })).toBe('awaitingFirst');
    expect(planStateOf('superseded')).toBe('superseded');
  });
});
