import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { backoffCeiling, linkMachine, type AttemptInput, type ConnectionInput, type LinkInput } from './link.machine';

// The pure machine with its work held open by hand, on a simulated clock: every wait below is
// exactly the machine's (the placeholder retry delay is the ceiling, without jitter).

interface Held<T> {
  input: unknown;
  signal: AbortSignal;
  resolve(value: T): void;
  reject(error: unknown): void;
}

class HeldWork<TInput, TOutput> {
  readonly started: Array<Held<TOutput>> = [];
  readonly logic = fromPromise<TOutput, TInput>(({ input, signal }) => new Promise<TOutput>((resolve, reject) => {
    this.started.push({ input, signal, resolve, reject });
  }));
  get last(): Held<TOutput> {
    const held = this.started.at(-1);
    if (held === undefined) throw new Error('nothing was started');
    return held;
  }
  get live(): number {
    return this.started.filter((held) => !held.signal.aborted).length;
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const input: LinkInput = {
  backoff: { firstMs: 200, capMs: 1_000 },
  timings: { attemptTimeoutMs: 5_000, livenessTimeoutMs: 2_000, standbyAfterMs: 250, settledAfterMs: 10_000 },
};

function start() {
  const clock = new SimulatedClock();
  const attempts = new HeldWork<AttemptInput, unknown>();
  const watches = new HeldWork<ConnectionInput, string>();
  const checks = new HeldWork<ConnectionInput, void>();
  const told: string[] = [];
  const logic = linkMachine.provide({
    actors: { attempt: attempts.logic, watch: watches.logic, check: checks.logic },
    actions: {
      announceLinked: ({ context }) => { told.push(`linked ${String(context.connection)}`); },
      announceUnlinked: ({ context }) => { told.push(`unlinked ${String(context.connection)}`); },
    },
  });
  const actor = createActor(logic, { input, clock }).start();
  const value = () => actor.getSnapshot().value;
  return { clock, attempts, watches, checks, told, actor, value };
}

async function link(rig: ReturnType<typeof start>, connection: string): Promise<void> {
  rig.attempts.last.resolve(connection);
  await settle();
  expect(rig.value()).toEqual({ linked: 'steady' });
}

describe('backoffCeiling', () => {
  test('doubles from the first step for each failure and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffCeiling(n, { firstMs: 200, capMs: 1_000 }))).toEqual([200, 400, 800, 1_000, 1_000, 1_000]);
  });

  test('stays at the cap however many attempts failed', () => {
    expect(backoffCeiling(100_000, { firstMs: 200, capMs: 60_000 })).toBe(60_000);
  });
});

describe('the link machine', () => {
  test('links on the first attempt, telling the host, with the attempt given its timeout', async () => {
    const rig = start();
    expect(rig.value()).toBe('connecting');
    expect(rig.attempts.last.input).toEqual({ timeoutMs: 5_000 });
    await link(rig, 'c1');
    expect(rig.told).toEqual(['linked c1']);
    expect(rig.watches.last.input).toEqual({ connection: 'c1' });
  });

  test('waits longer after each failed attempt, up to the cap', async () => {
    const rig = start();
    for (const wait of [200, 400, 800, 1_000, 1_000]) {
      rig.attempts.last.reject(new Error('connection refused'));
      await settle();
      expect(rig.value()).toBe('backingOff');
      rig.clock.increment(wait - 1);
      expect(rig.value()).toBe('backingOff');
      rig.clock.increment(1);
      expect(rig.value()).toBe('connecting');
    }
    expect(rig.attempts.started).toHaveLength(6);
    expect(rig.actor.getSnapshot().context.lastProblem).toBe('connection refused');
  });

  test('gives an attempt that hangs its timeout, then counts it as failed', () => {
    const rig = start();
    rig.clock.increment(4_999);
    expect(rig.value()).toBe('connecting');
    rig.clock.increment(1);
    expect(rig.value()).toBe('backingOff');
    expect(rig.attempts.last.signal.aborted).toBe(true);
    expect(rig.actor.getSnapshot().context.lastProblem).toBe('no link within 5000 ms');
  });

  test('a rouse ends the attempt under way, and the wait after it is the next one, not the first', async () => {
    const rig = start();
    rig.attempts.last.reject(new Error('no route to host'));
    await settle();
    rig.clock.increment(200);
    expect(rig.value()).toBe('connecting');
    rig.actor.send({ type: 'operator.rouse' });
    expect(rig.attempts.last.signal.aborted).toBe(true);
    expect(rig.value()).toBe('backingOff');
    rig.clock.increment(399);
    expect(rig.value()).toBe('backingOff');
    rig.clock.increment(1);
    expect(rig.value()).toBe('connecting');
  });

  test('a rouse during a wait neither shortens it nor resets the backoff', async () => {
    const rig = start();
    rig.attempts.last.reject(new Error('refused'));
    await settle();
    rig.clock.increment(200);
    rig.attempts.last.reject(new Error('refused'));
    await settle();
    // Waiting 400 ms; roused twice in it.
    rig.clock.increment(100);
    rig.actor.send({ type: 'operator.rouse' });
    rig.actor.send({ type: 'operator.rouse' });
    rig.clock.increment(299);
    expect(rig.value()).toBe('backingOff');
    expect(rig.attempts.started).toHaveLength(2);
    rig.clock.increment(1);
    expect(rig.value()).toBe('connecting');
    rig.attempts.last.reject(new Error('refused'));
    await settle();
    rig.clock.increment(799);
    expect(rig.value()).toBe('backingOff');
    rig.clock.increment(1);
    expect(rig.attempts.started).toHaveLength(4);
  });

  test('a rouse on a link that answers costs one ping and nothing else', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.actor.send({ type: 'operator.rouse' });
    rig.actor.send({ type: 'operator.rouse' });
    expect(rig.value()).toEqual({ linked: { verifying: 'waiting' } });
    expect(rig.checks.started).toHaveLength(1);
    expect(rig.checks.last.input).toEqual({ connection: 'c1' });
    rig.checks.last.resolve();
    await settle();
    expect(rig.value()).toEqual({ linked: 'steady' });
    rig.clock.increment(60_000);
    expect(rig.attempts.started).toHaveLength(1);
    expect(rig.watches.live).toBe(1);
    expect(rig.told).toEqual(['linked c1']);
  });

  test('a silent link gets a new connection beside it, which replaces it when it links first', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.actor.send({ type: 'operator.rouse' });
    rig.clock.increment(249);
    expect(rig.attempts.started).toHaveLength(1);
    rig.clock.increment(1);
    expect(rig.value()).toEqual({ linked: { verifying: 'racing' } });
    expect(rig.attempts.started).toHaveLength(2);
    rig.actor.send({ type: 'operator.rouse' });
    expect(rig.attempts.started).toHaveLength(2);
    rig.attempts.last.resolve('c2');
    await settle();
    expect(rig.value()).toEqual({ linked: 'steady' });
    expect(rig.told).toEqual(['linked c1', 'unlinked c1', 'linked c2']);
    expect(rig.watches.started[0]?.signal.aborted).toBe(true);
    expect(rig.watches.last.input).toEqual({ connection: 'c2' });
    expect(rig.checks.last.signal.aborted).toBe(true);
  });

  test('an answer that comes while the new connection is being made keeps the old link and calls the new one off', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.actor.send({ type: 'operator.rouse' });
    rig.clock.increment(250);
    rig.checks.last.resolve();
    await settle();
    expect(rig.value()).toEqual({ linked: 'steady' });
    expect(rig.attempts.last.signal.aborted).toBe(true);
    expect(rig.told).toEqual(['linked c1']);
  });

  test('a link silent for the liveness timeout, whose new connection failed too, is ended, and the retry waits the step after the first', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.actor.send({ type: 'operator.rouse' });
    rig.clock.increment(250);
    rig.attempts.last.reject(new Error('network unreachable'));
    await settle();
    expect(rig.value()).toEqual({ linked: { verifying: 'alone' } });
    rig.clock.increment(1_749);
    expect(rig.value()).toEqual({ linked: { verifying: 'alone' } });
    rig.clock.increment(1);
    expect(rig.value()).toBe('backingOff');
    expect(rig.watches.last.signal.aborted).toBe(true);
    expect(rig.told).toEqual(['linked c1', 'unlinked c1']);
    expect(rig.actor.getSnapshot().context).toMatchObject({ failures: 2, connection: null, lastProblem: 'no answer to a ping within 2000 ms of a rouse' });
    rig.clock.increment(400);
    expect(rig.value()).toBe('connecting');
  });

  test('a link silent for the liveness timeout while its new connection is still being made is ended, and both are retried after the first step', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.actor.send({ type: 'operator.rouse' });
    rig.clock.increment(2_000);
    expect(rig.value()).toBe('backingOff');
    expect(rig.attempts.last.signal.aborted).toBe(true);
    expect(rig.watches.last.signal.aborted).toBe(true);
    rig.clock.increment(199);
    expect(rig.value()).toBe('backingOff');
    rig.clock.increment(1);
    expect(rig.value()).toBe('connecting');
  });

  test('a link that ends is retried after the first step', async () => {
    const rig = start();
    await link(rig, 'c1');
    rig.watches.last.resolve('the broker closed the connection');
    await settle();
    expect(rig.value()).toBe('backingOff');
    expect(rig.actor.getSnapshot().context.lastProblem).toBe('the broker closed the connection');
    rig.clock.increment(200);
    expect(rig.value()).toBe('connecting');
  });

  test('forgives earlier failures only once a link has held for the settling time', async () => {
    const rig = start();
    for (let i = 0; i < 3; i += 1) {
      rig.attempts.last.reject(new Error('refused'));
      await settle();
      rig.clock.increment(1_000);
    }
    await link(rig, 'c1');
    expect(rig.actor.getSnapshot().context.failures).toBe(3);
    // A link that drops at once does not buy a fast retry: the broker may be what drops it.
    rig.watches.last.resolve('closed');
    await settle();
    rig.clock.increment(999);
    expect(rig.value()).toBe('backingOff');
    rig.clock.increment(1);
    await link(rig, 'c2');
    rig.clock.increment(10_000);
    expect(rig.actor.getSnapshot().context.failures).toBe(0);
    rig.watches.last.resolve('closed');
    await settle();
    rig.clock.increment(200);
    expect(rig.value()).toBe('connecting');
  });

  test('stopping ends whatever is under way and closes the link', async () => {
    const connecting = start();
    connecting.actor.send({ type: 'host.stopping' });
    expect(connecting.actor.getSnapshot().status).toBe('done');
    expect(connecting.attempts.last.signal.aborted).toBe(true);

    const linked = start();
    await link(linked, 'c1');
    linked.actor.send({ type: 'operator.rouse' });
    linked.actor.send({ type: 'host.stopping' });
    expect(linked.actor.getSnapshot().status).toBe('done');
    expect(linked.watches.last.signal.aborted).toBe(true);
    expect(linked.checks.last.signal.aborted).toBe(true);
    expect(linked.told).toEqual(['linked c1', 'unlinked c1']);

    const waiting = start();
    waiting.attempts.last.reject(new Error('refused'));
    await settle();
    waiting.actor.send({ type: 'host.stopping' });
    waiting.clock.increment(60_000);
    expect(waiting.actor.getSnapshot().status).toBe('done');
    expect(waiting.attempts.started).toHaveLength(1);
  });
});
