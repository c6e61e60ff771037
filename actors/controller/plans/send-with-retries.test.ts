import type { NodeSendOutcome } from './send-plan-revision';
import { sendWithRetries, withinBound } from './send-with-retries';

// The plan's rest-of-fleet step ends only when every node's send ends (seeds 9 and 10 of the
// cluster chaos test: a send never answered held a plan in `sending` for good). These pin that a
// node's send always ends, and that what the bus did not answer is tried again.

const SENT: NodeSendOutcome = { sent: { generation: 4, digest: 'd'.repeat(64), at: '2026-01-01T00:00:00.000Z' } };
const QUICK = { firstMs: 1, capMs: 4, attempts: 4 };

/** A fake send: answers each attempt with the next outcome given, the last one for ever after. */
function fakeSend(...outcomes: Array<NodeSendOutcome | 'never'>): { send: () => Promise<NodeSendOutcome>; attempts: () => number } {
  let attempts = 0;
  return {
    send: () => {
      const outcome = outcomes[Math.min(attempts, outcomes.length - 1)];
      attempts += 1;
      return outcome === 'never' || outcome === undefined ? new Promise<NodeSendOutcome>(() => undefined) : Promise.resolve(outcome);
    },
    attempts: () => attempts,
  };
}

describe('a node send of a plan', () => {
  test('that never ends counts as failed once its bound has passed, so the plan is not held in sending', async () => {
    const outcome = await withinBound(new Promise<NodeSendOutcome>(() => undefined), 50);
    expect(outcome).toEqual({ failed: expect.stringMatching(/did not end within/), passing: true });
  });

  test('that throws counts as failed with its message', async () => {
    expect(await withinBound(Promise.reject(new Error('store gone')), 1_000)).toEqual({ failed: 'store gone' });
  });

  test('that throws because the store\'s connection was reset counts as a failure to try again', async () => {
    const reset = Object.assign(new Error('connect ECONNRESET 127.0.0.1:43619'), { code: 'ECONNRESET' });
    expect(await withinBound(Promise.reject(reset), 1_000)).toEqual({ failed: 'connect ECONNRESET 127.0.0.1:43619', passing: true });
  });

  test('that the broker did not answer is tried again and its later success is the outcome', async () => {
    const fake = fakeSend({ failed: 'timeout', passing: true }, { failed: 'jetstream is not enabled', passing: true }, SENT);
    const told: string[] = [];
    const outcome = await sendWithRetries(fake.send, { retry: QUICK, boundMs: 1_000, signal: new AbortController().signal, failed: (attempt, reason, wait) => told.push(`${attempt} ${reason} ${wait === undefined ? 'stop' : 'again'}`), random: () => 0 });
    expect(outcome).toEqual(SENT);
    expect(fake.attempts()).toBe(3);
    expect(told).toEqual(['1 timeout again', '2 jetstream is not enabled again']);
  });

  test('that fails for a reason waiting does not change is not tried again', async () => {
    const fake = fakeSend({ failed: 'the declaration could not be composed' }, SENT);
    const outcome = await sendWithRetries(fake.send, { retry: QUICK, boundMs: 1_000, signal: new AbortController().signal });
    expect(outcome).toEqual({ failed: 'the declaration could not be composed' });
    expect(fake.attempts()).toBe(1);
  });

  test('stops trying after its attempts, with the last failure', async () => {
    const fake = fakeSend({ failed: 'timeout', passing: true });
    const told: string[] = [];
    const outcome = await sendWithRetries(fake.send, { retry: QUICK, boundMs: 1_000, signal: new AbortController().signal, failed: (attempt, _reason, wait) => told.push(`${attempt} ${wait === undefined ? 'stop' : 'again'}`) });
    expect(outcome).toEqual({ failed: 'timeout', passing: true });
    expect(fake.attempts()).toBe(4);
    expect(told).toEqual(['1 again', '2 again', '3 again', '4 stop']);
  });

  test('that hangs is tried again once its bound has passed, and the next attempt\'s success is the outcome', async () => {
    const fake = fakeSend('never', SENT);
    const outcome = await sendWithRetries(fake.send, { retry: QUICK, boundMs: 50, signal: new AbortController().signal });
    expect(outcome).toEqual(SENT);
    expect(fake.attempts()).toBe(2);
  });

  test('is not tried again once the plan left the state that sends', async () => {
    const fake = fakeSend({ failed: 'timeout', passing: true }, SENT);
    const leaving = new AbortController();
    const outcome = await sendWithRetries(fake.send, { retry: { firstMs: 60_000, capMs: 60_000, attempts: 4 }, boundMs: 1_000, signal: leaving.signal, failed: () => leaving.abort() });
    expect(outcome).toEqual({ failed: 'timeout', passing: true });
    expect(fake.attempts()).toBe(1);
  });
});
