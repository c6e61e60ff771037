import { createActor, SimulatedClock } from 'xstate';
import type { AttemptInput } from '../../../machines/link.machine';
import { linkLogic, type LinkEnd } from './link.actor';

// The real link actor (linkLogic) with a fake network behind it, on a simulated clock: the
// attempts, watches and checks are held open and settled by hand, and every wait is measured
// on the clock, so what is asserted is exactly the schedule the host would keep.

interface FakeConnection {
  name: string;
  closed: boolean;
}

interface Pending<T> {
  signal: AbortSignal;
  resolve(value: T): void;
  reject(error: Error): void;
}

class FakeNetwork {
  readonly attempts: Array<Pending<FakeConnection> & { input: AttemptInput }> = [];
  readonly watches: Array<Pending<string> & { connection: FakeConnection }> = [];
  readonly checks: Array<Pending<void> & { connection: FakeConnection }> = [];
  readonly delays: number[] = [];
  readonly told: string[] = [];
  jitter = 0;

  readonly deps = {
    attempt: (input: AttemptInput, signal: AbortSignal) => new Promise<FakeConnection>((resolve, reject) => {
      this.attempts.push({ input, signal, resolve, reject });
    }),
    watch: (connection: FakeConnection, signal: AbortSignal) => new Promise<string>((resolve, reject) => {
      signal.addEventListener('abort', () => { connection.closed = true; });
      this.watches.push({ connection, signal, resolve, reject });
    }),
    check: (connection: FakeConnection, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
      this.checks.push({ connection, signal, resolve, reject });
    }),
    random: () => this.jitter,
    linked: (connection: FakeConnection, replacing: boolean) => { this.told.push(`linked ${connection.name}${replacing ? ' (replacing)' : ''}`); },
    unlinked: (connection: FakeConnection, end: LinkEnd) => { this.told.push(`unlinked ${connection.name}: ${end.kind}${'why' in end ? ` (${end.why})` : ''}`); },
    waiting: (delayMs: number) => { this.delays.push(delayMs); },
  };

  get lastAttempt(): Pending<FakeConnection> & { input: AttemptInput } {
    const last = this.attempts.at(-1);
    if (last === undefined) throw new Error('no attempt was made');
    return last;
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function startLink(network: FakeNetwork) {
  const clock = new SimulatedClock();
  const actor = createActor(linkLogic(network.deps), {
    clock,
    input: { backoff: { firstMs: 200, capMs: 5_000 }, timings: { attemptTimeoutMs: 10_000, livenessTimeoutMs: 2_000, standbyAfterMs: 250, settledAfterMs: 10_000 } },
  }).start();
  return { clock, actor };
}

async function failAttempt(network: FakeNetwork): Promise<void> {
  network.lastAttempt.reject(new Error('connection refused'));
  await settle();
}

describe('the link actor', () => {
  test('a rouse during a backoff wait does not shorten the wait, and the next delay is not the first delay again', async () => {
    const network = new FakeNetwork();
    const { clock, actor } = startLink(network);
    await failAttempt(network);
    clock.increment(200);
    await failAttempt(network);
    expect(network.delays).toEqual([200, 400]);

    // Roused 10 ms into the 400 ms wait, twice.
    clock.increment(10);
    actor.send({ type: 'operator.rouse' });
    actor.send({ type: 'operator.rouse' });
    clock.increment(389);
    expect(network.attempts).toHaveLength(2);
    clock.increment(1);
    expect(network.attempts).toHaveLength(3);

    await failAttempt(network);
    expect(network.delays).toEqual([200, 400, 800]);
    actor.stop();
  });

  test('a rouse ends a hanging attempt, and the wait after it is the next step of the backoff', async () => {
    const network = new FakeNetwork();
    const { clock, actor } = startLink(network);
    await failAttempt(network);
    clock.increment(200);
    const hanging = network.lastAttempt;
    actor.send({ type: 'operator.rouse' });
    actor.send({ type: 'operator.rouse' });
    expect(hanging.signal.aborted).toBe(true);
    expect(network.delays).toEqual([200, 400]);
    clock.increment(400);
    expect(network.attempts).toHaveLength(3);
    actor.stop();
  });

  test('jitters each wait down by up to half of the backoff step, never up', async () => {
    const network = new FakeNetwork();
    const { clock, actor } = startLink(network);
    network.jitter = 0.5;
    await failAttempt(network);
    expect(network.delays).toEqual([150]);
    clock.increment(149);
    expect(network.attempts).toHaveLength(1);
    clock.increment(1);
    network.jitter = 0.999_999;
    await failAttempt(network);
    expect(network.delays).toEqual([150, 200]);
    actor.stop();
  });

  test('two rouses on a silent link make one check and one new connection, which takes over', async () => {
    const network = new FakeNetwork();
    const { clock, actor } = startLink(network);
    const first = { name: 'first', closed: false };
    network.lastAttempt.resolve(first);
    await settle();
    actor.send({ type: 'operator.rouse' });
    actor.send({ type: 'operator.rouse' });
    clock.increment(250);
    actor.send({ type: 'operator.rouse' });
    expect(network.checks).toHaveLength(1);
    expect(network.attempts).toHaveLength(2);
    network.lastAttempt.resolve({ name: 'second', closed: false });
    await settle();
    expect(first.closed).toBe(true);
    expect(network.told).toEqual(['linked first', 'unlinked first: replaced', 'linked second (replacing)']);
    expect(network.delays).toEqual([]);
    actor.stop();
  });

  test('tells why each link was let go: ended, silent after a rouse, or stopping', async () => {
    const network = new FakeNetwork();
    const { clock, actor } = startLink(network);
    network.lastAttempt.resolve({ name: 'one', closed: false });
    await settle();
    network.watches.at(-1)?.resolve('the broker stopped answering pings');
    await settle();
    clock.increment(200);
    network.lastAttempt.resolve({ name: 'two', closed: false });
    await settle();
    actor.send({ type: 'operator.rouse' });
    clock.increment(250);
    network.lastAttempt.reject(new Error('network unreachable'));
    await settle();
    clock.increment(1_750);
    // Link two never held for the settling time: its end, the failed new connection and the
    // silence all count.
    expect(network.delays).toEqual([200, 800]);
    clock.increment(800);
    network.lastAttempt.resolve({ name: 'three', closed: false });
    await settle();
    actor.send({ type: 'host.stopping' });
    expect(network.told).toEqual([
      'linked one',
      'unlinked one: ended (the broker stopped answering pings)',
      'linked two',
      'unlinked two: silent (no answer to a ping within 2000 ms of a rouse)',
      'linked three',
      'unlinked three: stopping',
    ]);
    // The first ended by itself; the other two were closed by the actor letting them go.
    expect(network.watches.map((watch) => watch.connection.closed)).toEqual([false, true, true]);
  });
});
