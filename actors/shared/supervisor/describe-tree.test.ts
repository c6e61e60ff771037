import { createActor, createMachine, setup, SimulatedClock, spawnChild } from 'xstate';
import { describeTree } from './describe-tree';
import { FakeChild, settle } from './fake-child';
import { supervise } from './supervise';

const limits = { maxRestarts: 3, windowMs: 10_000, backoff: { baseMs: 100, maxMs: 1_000 } };

describe('describeTree', () => {
  it('shows every child with its state, counted restarts and last error, nested supervisors below their slot', async () => {
    const fetcher = new FakeChild();
    const link = createMachine({ id: 'link', initial: 'connecting', states: { connecting: {} } });
    const workers = supervise({ name: 'workers', ...limits, children: [{ id: 'fetcher', logic: fetcher.logic, restart: 'permanent' }] });
    const clock = new SimulatedClock();
    const actor = createActor(
      supervise({
        name: 'host',
        ...limits,
        children: [
          { id: 'link', logic: link, restart: 'permanent' },
          { id: 'workers', logic: workers, restart: 'permanent' },
        ],
      }),
      { clock },
    );
    actor.start();
    fetcher.current.fail('timed out');
    await settle();

    expect(describeTree(actor)).toEqual({
      id: 'host',
      state: 'supervising',
      restarts: 0,
      children: [
        { id: 'link', state: 'running', restarts: 0, child_state: 'connecting', children: [] },
        {
          id: 'workers',
          state: 'running',
          restarts: 0,
          child_state: 'supervising',
          children: [{ id: 'fetcher', state: 'backingOff', restarts: 1, last_error: 'timed out', children: [] }],
        },
      ],
    });

    clock.increment(100);
    const fetcherNode = describeTree(actor).children[1]?.children[0];
    expect(fetcherNode).toMatchObject({ state: 'running', restarts: 1, last_error: 'timed out' });
    actor.stop();
  });

  it('shows a supervisor that has stopped with no children', () => {
    const actor = createActor(supervise({ name: 'host', ...limits, children: [{ id: 'job', logic: new FakeChild().logic, restart: 'transient' }] }));
    actor.start();
    actor.send({ type: 'supervisor.stop' });
    expect(describeTree(actor)).toEqual({ id: 'host', state: 'stopped', restarts: 0, children: [] });
  });

  it('shows a parallel child state as its regions', () => {
    const both = createMachine({
      id: 'both',
      type: 'parallel',
      states: { link: { initial: 'up', states: { up: {} } }, store: { initial: 'open', states: { open: {} } } },
    });
    const actor = createActor(supervise({ name: 'host', ...limits, children: [{ id: 'both', logic: both, restart: 'permanent' }] }));
    actor.start();
    expect(describeTree(actor).children[0]?.child_state).toBe('link.up, store.open');
    actor.stop();
  });
  it('shows a supervisor that a machine child spawned below that child, as the host\'s lifecycle spawns its node', () => {
    const node = supervise({ name: 'node', ...limits, children: [{ id: 'link', logic: createMachine({ id: 'link', initial: 'connecting', states: { connecting: {} } }), restart: 'permanent' }] });
    const lifecycle = setup({ actors: { node } }).createMachine({
      id: 'lifecycle',
      initial: 'hosted',
      states: { hosted: { on: { enrolled: { target: 'enrolled', actions: spawnChild('node', { id: 'node' }) } } }, enrolled: {} },
    });
    const actor = createActor(supervise({ name: 'host', ...limits, children: [{ id: 'lifecycle', logic: lifecycle, restart: 'permanent' }] }), { clock: new SimulatedClock() });
    actor.start();
    expect(describeTree(actor).children).toEqual([{ id: 'lifecycle', state: 'running', restarts: 0, child_state: 'hosted', children: [] }]);

    const slot = actor.getSnapshot().children.lifecycle;
    slot?.getSnapshot().children.child.send({ type: 'enrolled' });
    expect(describeTree(actor).children).toEqual([{
      id: 'lifecycle',
      state: 'running',
      restarts: 0,
      child_state: 'enrolled',
      children: [{ id: 'node', state: 'supervising', restarts: 0, children: [{ id: 'link', state: 'running', restarts: 0, child_state: 'connecting', children: [] }] }],
    }]);
    actor.stop();
  });
});
