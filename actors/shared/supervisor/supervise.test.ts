import { createActor, SimulatedClock } from 'xstate';
import { FakeChild, settle } from './fake-child';
import { supervise, type Retained, type SupervisorSpec } from './supervise';

const limits = { maxRestarts: 3, windowMs: 10_000, backoff: { baseMs: 100, maxMs: 1_000 } };

function start(spec: SupervisorSpec) {
  const clock = new SimulatedClock();
  const actor = createActor(supervise(spec), { clock });
  actor.start();
  return { actor, clock };
}

async function failAndRestart(child: FakeChild, clock: SimulatedClock, message: string, wait: number): Promise<void> {
  child.current.fail(message);
  await settle();
  clock.increment(wait);
}

describe('supervise', () => {
  it('restarts only the failing child and leaves its siblings running', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const { actor, clock } = start({
      name: 'host',
      ...limits,
      children: [
        { id: 'fetcher', logic: fetcher.logic, restart: 'permanent' },
        { id: 'link', logic: link.logic, restart: 'permanent' },
      ],
    });
    await failAndRestart(fetcher, clock, 'boom', 100);
    expect(fetcher.incarnations).toHaveLength(2);
    expect(fetcher.incarnations[0]?.stopped).toBe(false);
    expect(link.incarnations).toHaveLength(1);
    expect(link.current.stopped).toBe(false);
    actor.stop();
  });

  it('waits base, twice base, four times base and then the cap between restarts', async () => {
    const child = new FakeChild();
    const { actor, clock } = start({
      name: 'host',
      maxRestarts: 10,
      windowMs: 60_000,
      backoff: { baseMs: 100, maxMs: 300 },
      children: [{ id: 'fetcher', logic: child.logic, restart: 'permanent' }],
    });
    for (const [i, wait] of [100, 200, 300, 300].entries()) {
      child.current.fail('boom');
      await settle();
      clock.increment(wait - 1);
      expect(child.incarnations).toHaveLength(i + 1);
      clock.increment(1);
      expect(child.incarnations).toHaveLength(i + 2);
    }
    actor.stop();
  });

  it('gives up when one child fails more than maxRestarts times in the window, stopping its siblings', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const { actor, clock } = start({
      name: 'host',
      ...limits,
      maxRestarts: 1,
      children: [
        { id: 'fetcher', logic: fetcher.logic, restart: 'permanent' },
        { id: 'link', logic: link.logic, restart: 'permanent' },
      ],
    });
    await failAndRestart(fetcher, clock, 'connection refused', 100);
    fetcher.current.fail('connection reset');
    await settle();
    expect(actor.getSnapshot().value).toBe('escalated');
    expect(actor.getSnapshot().output).toEqual({
      outcome: 'escalated',
      child: 'fetcher',
      error: 'connection reset',
      maxRestarts: 1,
      windowMs: 10_000,
    });
    expect(link.current.stopped).toBe(true);
  });

  it('restarts a nested supervisor that gave up, and leaves its siblings alone (one for one)', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const workers = supervise({
      name: 'workers',
      maxRestarts: 1,
      windowMs: 10_000,
      backoff: { baseMs: 10, maxMs: 10 },
      children: [{ id: 'fetcher', logic: fetcher.logic, restart: 'permanent' }],
    });
    const { actor, clock } = start({
      name: 'host',
      ...limits,
      children: [
        { id: 'workers', logic: workers, restart: 'transient' },
        { id: 'link', logic: link.logic, restart: 'permanent' },
      ],
    });
    await failAndRestart(fetcher, clock, 'disk full', 10);
    fetcher.current.fail('disk full');
    await settle();
    // workers gave up: its fetcher is gone and host is backing off before starting workers again.
    expect(fetcher.running).toBe(0);
    const hostWorkers = actor.getSnapshot().children.workers;
    expect(hostWorkers?.getSnapshot().value).toBe('backingOff');
    expect(hostWorkers?.getSnapshot().context.lastError).toBe('gave up on fetcher after more than 1 restart in 10000 ms: disk full');
    clock.increment(100);
    expect(fetcher.incarnations).toHaveLength(3);
    expect(fetcher.running).toBe(1);
    expect(link.incarnations).toHaveLength(1);
    expect(link.current.stopped).toBe(false);
    expect(actor.getSnapshot().value).toBe('supervising');
    actor.stop();
  });

  it('keeps what an incarnation retained for the next one', async () => {
    const child = new FakeChild();
    const { actor, clock } = start({ name: 'host', ...limits, children: [{ id: 'reader', logic: child.logic, restart: 'permanent' }] });
    const retainedOf = (i: number) => (child.incarnations[i]?.input as { retained: Retained }).retained;
    retainedOf(0).set('cursor', 41);
    await failAndRestart(child, clock, 'boom', 100);
    expect(retainedOf(1).get('cursor')).toBe(41);
    actor.stop();
  });

  it('keeps retained state across a restart of the supervisor between the child and its keeper', async () => {
    const reader = new FakeChild();
    const inner = supervise({
      name: 'inner',
      maxRestarts: 0,
      windowMs: 10_000,
      backoff: { baseMs: 10, maxMs: 10 },
      children: [{ id: 'reader', logic: reader.logic, restart: 'permanent' }],
    });
    const { actor, clock } = start({ name: 'host', ...limits, children: [{ id: 'inner', logic: inner, restart: 'permanent' }] });
    (reader.current.input as { retained: Retained }).retained.set('cursor', 7);
    reader.current.fail('boom'); // inner gives up at once; host restarts inner
    await settle();
    clock.increment(100);
    expect(reader.incarnations).toHaveLength(2);
    expect((reader.current.input as { retained: Retained }).retained.get('cursor')).toBe(7);
    actor.stop();
  });

  it('hands each child its own settings with retained added', () => {
    const child = new FakeChild();
    const { actor } = start({
      name: 'host',
      ...limits,
      children: [{ id: 'link', logic: child.logic, restart: 'permanent', input: { address: 'nats://broker:4222' } }],
    });
    expect(child.current.input).toEqual({ address: 'nats://broker:4222', retained: expect.any(Map) });
    actor.stop();
  });

  it('stops every child cleanly on supervisor.stop and ends stopped', async () => {
    const fetcher = new FakeChild();
    const link = new FakeChild();
    const { actor, clock } = start({
      name: 'host',
      ...limits,
      children: [
        { id: 'fetcher', logic: fetcher.logic, restart: 'permanent' },
        { id: 'link', logic: link.logic, restart: 'permanent' },
      ],
    });
    fetcher.current.fail('boom');
    await settle();
    actor.send({ type: 'supervisor.stop' });
    clock.increment(10_000);
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(actor.getSnapshot().output).toEqual({ outcome: 'stopped', child: 'host' });
    expect(link.current.stopped).toBe(true);
    expect(fetcher.incarnations).toHaveLength(1);
  });

  // A permanent child's normal exit restarted (and escalating like a failure) and a transient
  // child's ending its slot are walked by model-tests/supervisor*.model.test.ts, per policy.

  it('ends stopped once every child has ended for good', async () => {
    const first = new FakeChild();
    const second = new FakeChild();
    const { actor } = start({
      name: 'batch',
      ...limits,
      children: [
        { id: 'first', logic: first.logic, restart: 'transient' },
        { id: 'second', logic: second.logic, restart: 'transient' },
      ],
    });
    first.current.finish();
    await settle();
    expect(actor.getSnapshot().value).toBe('supervising');
    second.current.finish();
    await settle();
    expect(actor.getSnapshot().output).toEqual({ outcome: 'stopped', child: 'batch' });
  });

  it('refuses a supervisor without children or with two children of one name', () => {
    const child = new FakeChild();
    expect(() => supervise({ name: 'empty', ...limits, children: [] })).toThrow(/no children/);
    expect(() =>
      supervise({
        name: 'twice',
        ...limits,
        children: [
          { id: 'link', logic: child.logic, restart: 'permanent' },
          { id: 'link', logic: child.logic, restart: 'permanent' },
        ],
      }),
    ).toThrow(/"link" twice/);
  });

  it('refuses limits that cannot work', () => {
    const children = [{ id: 'link', logic: new FakeChild().logic, restart: 'permanent' as const }];
    expect(() => supervise({ name: 'host', ...limits, maxRestarts: -1, children })).toThrow(/maxRestarts/);
    expect(() => supervise({ name: 'host', ...limits, windowMs: 0, children })).toThrow(/windowMs/);
    expect(() => supervise({ name: 'host', ...limits, backoff: { baseMs: 500, maxMs: 100 }, children })).toThrow(/backoff/);
  });
});
