import { createActor, SimulatedClock } from 'xstate';
import { FakeChild, settle } from '../actors/shared/supervisor/fake-child';
import { failureMessage, isEscalationReport, limitText, restartDelay, supervisorMachine, type SupervisorInput } from './supervisor.machine';

function startSlot(overrides: Partial<SupervisorInput> = {}) {
  const clock = new SimulatedClock();
  const child = new FakeChild();
  const input: SupervisorInput = {
    child: 'fetcher',
    restart: 'permanent',
    maxRestarts: 10,
    windowMs: 60_000,
    backoff: { baseMs: 100, maxMs: 350 },
    ...overrides,
  };
  const actor = createActor(supervisorMachine.provide({ actors: { child: child.logic } }), { input, clock });
  actor.start();
  return { actor, clock, child };
}

describe('restartDelay', () => {
  it('doubles from the base for each restart in the window and stops at the cap', () => {
    const backoff = { baseMs: 100, maxMs: 350 };
    expect([1, 2, 3, 4, 5].map((n) => restartDelay(backoff, n))).toEqual([100, 200, 350, 350, 350]);
  });

  it('stays at the cap however many restarts are counted', () => {
    expect(restartDelay({ baseMs: 1_000, maxMs: 30_000 }, 5_000)).toBe(30_000);
  });
});

describe('supervisorMachine', () => {
  it('restarts a failing child after base, twice base, four times base, then the cap', async () => {
    const { actor, clock, child } = startSlot();
    const waits = [100, 200, 350, 350];
    for (const [i, wait] of waits.entries()) {
      child.current.fail(`crash ${i + 1}`);
      await settle();
      expect(actor.getSnapshot().value).toBe('backingOff');
      clock.increment(wait - 1);
      expect(child.incarnations).toHaveLength(i + 1);
      clock.increment(1);
      expect(actor.getSnapshot().value).toBe('running');
      expect(child.incarnations).toHaveLength(i + 2);
    }
    expect(actor.getSnapshot().context.lastError).toBe('crash 4');
    expect(child.running).toBe(1);
    actor.stop();
  });

  it('forgives the restarts once the child has stayed up for windowMs, and backs off from the base again', async () => {
    const { actor, clock, child } = startSlot({ maxRestarts: 1, windowMs: 1_000 });
    child.current.fail('flaky');
    await settle();
    clock.increment(100);
    clock.increment(999);
    expect(actor.getSnapshot().context.recentRestarts).toBe(1);
    clock.increment(1);
    expect(actor.getSnapshot().context.recentRestarts).toBe(0);
    child.current.fail('flaky');
    await settle();
    expect(actor.getSnapshot().value).toBe('backingOff');
    clock.increment(99);
    expect(child.incarnations).toHaveLength(2);
    clock.increment(1);
    expect(child.incarnations).toHaveLength(3);
    actor.stop();
  });

  it('never escalates a child that stays up for windowMs between failures', async () => {
    const { actor, clock, child } = startSlot({ maxRestarts: 1, windowMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      child.current.fail('flaky');
      await settle();
      expect(actor.getSnapshot().value).toBe('backingOff');
      clock.increment(100);
      clock.increment(1_000);
    }
    expect(actor.getSnapshot().value).toBe('running');
    expect(child.incarnations).toHaveLength(6);
    actor.stop();
  });

  it('escalates on the failure after maxRestarts inside the window, naming the child and its last error', async () => {
    const { actor, clock, child } = startSlot({ maxRestarts: 2, windowMs: 10_000 });
    child.current.fail('connection refused');
    await settle();
    clock.increment(100);
    child.current.fail('connection refused');
    await settle();
    clock.increment(200);
    expect(actor.getSnapshot().value).toBe('running');
    child.current.fail('connection reset');
    await settle();
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toBe('escalated');
    expect(snapshot.status).toBe('done');
    expect(snapshot.output).toEqual({
      outcome: 'escalated',
      child: 'fetcher',
      error: 'connection reset',
      maxRestarts: 2,
      windowMs: 10_000,
    });
    expect(child.incarnations).toHaveLength(3);
  });

  it('escalates on the first failure when no restart is allowed', async () => {
    const { actor, child } = startSlot({ maxRestarts: 0 });
    child.current.fail('boom');
    await settle();
    expect(actor.getSnapshot().value).toBe('escalated');
  });

  it('escalates when the child fails again before it has stayed up for windowMs', async () => {
    const { actor, clock, child } = startSlot({ maxRestarts: 1, windowMs: 1_000 });
    child.current.fail('one');
    await settle();
    clock.increment(100);
    clock.increment(999);
    child.current.fail('two');
    await settle();
    expect(actor.getSnapshot().value).toBe('escalated');
  });

  it('stops a running child cleanly on supervisor.stop and ends stopped', () => {
    const { actor, child } = startSlot();
    actor.send({ type: 'supervisor.stop' });
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(actor.getSnapshot().output).toEqual({ outcome: 'stopped', child: 'fetcher' });
    expect(child.current.stopped).toBe(true);
  });

  it('starts no new incarnation when stopped while backing off', async () => {
    const { actor, clock, child } = startSlot();
    child.current.fail('boom');
    await settle();
    actor.send({ type: 'supervisor.stop' });
    clock.increment(10_000);
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(child.incarnations).toHaveLength(1);
  });

  it('ends stopped, without a restart, when a transient child ends cleanly', async () => {
    const { actor, clock, child } = startSlot({ restart: 'transient' });
    child.current.finish('done');
    await settle();
    clock.increment(10_000);
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(actor.getSnapshot().output).toEqual({ outcome: 'stopped', child: 'fetcher' });
    expect(child.incarnations).toHaveLength(1);
  });

  it('hands every incarnation the same child input, so what one writes there the next one reads', async () => {
    const retained = new Map<string, unknown>();
    const { actor, clock, child } = startSlot({ childInput: { retained } });
    (child.current.input as { retained: Map<string, unknown> }).retained.set('cursor', 41);
    child.current.fail('boom');
    await settle();
    clock.increment(100);
    expect(child.incarnations).toHaveLength(2);
    expect((child.current.input as { retained: Map<string, unknown> }).retained.get('cursor')).toBe(41);
    actor.stop();
  });

  it('fails loudly when no child was provided', async () => {
    const actor = createActor(supervisorMachine, {
      input: { child: 'nothing', restart: 'permanent', maxRestarts: 0, windowMs: 1, backoff: { baseMs: 1, maxMs: 1 } },
    });
    actor.start();
    await settle();
    expect(actor.getSnapshot().output).toMatchObject({ outcome: 'escalated', error: expect.stringContaining('provide') });
  });
});

describe('failureMessage', () => {
  it('uses an error\'s message, or its name when the message is empty', () => {
    expect(failureMessage(new Error('disk full'))).toBe('disk full');
    expect(failureMessage(new TypeError())).toBe('TypeError');
  });

  it('shows a thrown value that is not an error as text', () => {
    expect(failureMessage('refused')).toBe('refused');
    expect(failureMessage({ code: 'EPIPE' })).toBe('{"code":"EPIPE"}');
    expect(failureMessage(undefined)).toBe('undefined');
  });
});

describe('isEscalationReport', () => {
  it('accepts a slot\'s escalation output and nothing that merely looks like one', () => {
    expect(isEscalationReport({ outcome: 'escalated', child: 'a', error: 'b', maxRestarts: 1, windowMs: 2 })).toBe(true);
    expect(isEscalationReport({ outcome: 'escalated', child: 'a' })).toBe(false);
    expect(isEscalationReport({ outcome: 'stopped', child: 'a' })).toBe(false);
    expect(isEscalationReport(null)).toBe(false);
  });
});

describe('limitText', () => {
  it('says the limit in the singular or plural', () => {
    expect(limitText({ maxRestarts: 1, windowMs: 500 })).toBe('more than 1 restart in 500 ms');
    expect(limitText({ maxRestarts: 3, windowMs: 60_000 })).toBe('more than 3 restarts in 60000 ms');
  });
});
