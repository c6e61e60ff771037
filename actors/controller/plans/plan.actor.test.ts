import { createActor, SimulatedClock } from 'xstate';
import { planStateOf, type PlanContext } from '../../../machines/plan.machine';
import { planLogic } from './plan.actor';
import type { NodeSendOutcome } from './send-plan-revision';

const WAIT_MS = 60_000;

/** A plan actor over a fake world: sends are recorded and stamped with the fake clock's time. */
function fakePlan() {
  const clock = new SimulatedClock();
  const sends: Array<{ node: string; resend: boolean }> = [];
  const results = new Map<string, NodeSendOutcome>();
  const actor = createActor(
    planLogic({
      sendNode: async (node, _signal, resend) => {
        sends.push({ node, resend });
        return results.get(node) ?? { sent: { generation: sends.length, digest: 'd'.repeat(64), at: new Date(clock.now()).toISOString() } };
      },
      firstReportWaitLeft: (context: PlanContext) => {
        const at = context.first === null ? undefined : context.sent[context.first]?.at;
        return at === undefined ? WAIT_MS : Date.parse(at) + WAIT_MS - clock.now();
      },
    }),
    { clock },
  );
  actor.start();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { clock, sends, results, actor, settle, state: () => planStateOf(actor.getSnapshot().value) };
}

describe('the plan actor', () => {
  test('a retried plan counts the first machine\'s wait from the new send, not the first one', async () => {
    const plan = fakePlan();
    plan.actor.send({ type: 'plan.opened', policy: 'one-first', targets: ['a', 'b'], first: 'a' });
    await plan.settle();
    expect(plan.state()).toBe('awaitingFirst');
    plan.clock.increment(WAIT_MS);
    expect(plan.state()).toBe('stopped');

    plan.actor.send({ type: 'operator.retry' });
    await plan.settle();
    expect(plan.sends).toEqual([{ node: 'a', resend: false }, { node: 'a', resend: true }]);
    expect(plan.state()).toBe('awaitingFirst');
    // Regression: the wait was taken from the send before the retry, which had run out already,
    // so a retried plan stopped again at once.
    plan.clock.increment(WAIT_MS - 1);
    expect(plan.state()).toBe('awaitingFirst');
    plan.clock.increment(1);
    expect(plan.state()).toBe('stopped');
    plan.actor.stop();
  });

  test('sends every node not yet sent at once, keeping each outcome apart', async () => {
    const plan = fakePlan();
    plan.results.set('b', { failed: 'the broker did not answer' });
    plan.results.set('c', { skipped: 'it no longer runs module web' });
    plan.actor.send({ type: 'plan.opened', policy: 'together', targets: ['a', 'b', 'c'], first: null });
    await plan.settle();
    expect(plan.sends.map((send) => send.node).sort()).toEqual(['a', 'b', 'c']);
    const { context } = plan.actor.getSnapshot();
    expect(plan.state()).toBe('stopped');
    expect(Object.keys(context.sent)).toEqual(['a']);
    expect(context.failed).toEqual({ b: 'the broker did not answer' });
    expect(context.skipped).toEqual({ c: 'it no longer runs module web' });
    plan.actor.stop();
  });
});
