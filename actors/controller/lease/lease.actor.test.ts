import { createActor, type Actor } from 'xstate';
import type { LeaseTimings } from '../../../machines/lease.machine';
import { LeaseLost } from './lease-errors';
import { LeaseGate } from './lease-gate';
import { leaseLogic } from './lease.actor';
import { eventually } from '../serve/testing/eventually';
import { useLeaseWorld, type ControllerLease } from './testing/lease-world';

// The real lease actor on the real clock, over a real broker and store, with timings shrunk so a
// lease lives 1.5 s: what happens to two controllers when one stalls, stops or vanishes.

const world = useLeaseWorld();

const TIMINGS: LeaseTimings = { ttlMs: 1_500, renewEveryMs: 300, marginMs: 500, renewRetryMs: 100, contendEveryMs: 100 };

interface Running {
  side: ControllerLease;
  gate: LeaseGate;
  actor: Actor<ReturnType<typeof leaseLogic>>;
  losses: LeaseLost[];
  log: string[];
}

const running: Running[] = [];

async function start(bucket: string, name: string, proxied = false, timings: LeaseTimings = TIMINGS): Promise<Running> {
  const side = await world.controller({ bucket, name, timings, proxied, timeoutMs: 200 });
  const gate = new LeaseGate();
  const losses: LeaseLost[] = [];
  const log: string[] = [];
  const actor = createActor(leaseLogic({ lease: side.lease, gate, onLost: (error) => losses.push(error), log: (line) => log.push(line) }), { input: { timings } });
  actor.start();
  const entry = { side, gate, actor, losses, log };
  running.push(entry);
  return entry;
}

function until(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<number> {
  return eventually(what, condition, { timeoutMs });
}

/**
 * Watches two controllers' gates every few milliseconds until stopped: whether both were ever
 * seen acting at once, and at which look the first stopped acting and the second began. The
 * order of what the gates said, not the clock, is what the tests below hold to.
 */
function watchGates(first: Running, second: Running): { both: () => boolean; firstQuietAt: () => number | undefined; secondActsAt: () => number | undefined; stop: () => void } {
  let look = 0;
  let both = false;
  let firstQuietAt: number | undefined;
  let secondActsAt: number | undefined;
  const timer = setInterval(() => {
    look += 1;
    const [a, b] = [first.gate.isActing(), second.gate.isActing()];
    if (a && b) both = true;
    if (!a && firstQuietAt === undefined) firstQuietAt = look;
    if (b && secondActsAt === undefined) secondActsAt = look;
  }, 5);
  return { both: () => both, firstQuietAt: () => firstQuietAt, secondActsAt: () => secondActsAt, stop: () => clearInterval(timer) };
}

afterEach(() => {
  for (const entry of running.splice(0)) {
    entry.side.proxy?.thaw();
    entry.actor.stop();
  }
});

describe('the lease actor', () => {
  test('lets exactly one of two controllers act', async () => {
    const bucket = world.bucketName();
    const a = await start(bucket, 'ctl-a:1');
    await until('a acts', () => a.gate.isActing());
    const b = await start(bucket, 'ctl-b:2');
    await until('b has tried', () => b.actor.getSnapshot().value === 'contending');
    // Several renewals later, still one.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([a.gate.isActing(), b.gate.isActing()]).toEqual([true, false]);
    expect(b.gate.standing()).toMatchObject({ state: 'standing by', note: expect.stringContaining('ctl-a:1') });
    expect(b.log.filter((line) => line.includes('standing by'))).toHaveLength(1);
  });

  test('a holder whose link stalls stops acting before its lease can expire; the standby takes it under a higher epoch; the stalled one then finds it lost', async () => {
    const bucket = world.bucketName();
    const a = await start(bucket, 'ctl-a:1', true);
    await until('a acts', () => a.gate.isActing());
    const b = await start(bucket, 'ctl-b:2');
    await until('b stands by', () => b.actor.getSnapshot().value === 'contending');

    const gates = watchGates(a, b);
    a.side.proxy?.freeze();
    try {
      await until('a stops acting', () => gates.firstQuietAt() !== undefined);
      await until('b acts', () => gates.secondActsAt() !== undefined, 5_000);
    } finally {
      gates.stop();
    }
    // a stops acting before its lease can expire, and b takes the key only once it expired: never
    // both at once, and a quiet first.
    expect(gates.both()).toBe(false);
    expect(gates.firstQuietAt()).toBeLessThanOrEqual(gates.secondActsAt() as number);
    expect(b.gate.epoch()).toBeGreaterThan(a.gate.epoch());
    expect(a.gate.standing().state).toBe('quiet');
    expect(a.losses).toEqual([]);

    a.side.proxy?.thaw();
    await until('a hears its lease is lost', () => a.losses.length > 0);
    expect(a.losses[0]).toBeInstanceOf(LeaseLost);
    expect(a.losses[0]?.message).toContain('lost its lease (KV bucket');
    expect(a.losses[0]?.value).toMatch(/held by ctl-b:2/);
    expect(a.actor.getSnapshot().value).toBe('lost');
    expect(a.gate.standing().state).toBe('lost');
    expect(b.gate.isActing()).toBe(true);
  });

  test('a holder that stops gives the lease back, and the standby acts long before the lease could have expired', async () => {
    // A lease that would live a minute: b acting within the wait below can only be the give-back.
    const minute: LeaseTimings = { ...TIMINGS, ttlMs: 60_000 };
    const bucket = world.bucketName();
    const a = await start(bucket, 'ctl-a:1', false, minute);
    await until('a acts', () => a.gate.isActing());
    const b = await start(bucket, 'ctl-b:2', false, minute);
    await until('b stands by', () => b.actor.getSnapshot().value === 'contending');
    a.actor.send({ type: 'controller.stopping' });
    await until('a released', () => a.actor.getSnapshot().value === 'released');
    expect(a.gate.isActing()).toBe(false);
    await until('b acts', () => b.gate.isActing(), 10_000);
    expect(a.log.filter((line) => line.startsWith('lease: given back (revision '))).toHaveLength(1);
  });

  test('a standby takes the lease of a holder that vanished once it expires', async () => {
    const bucket = world.bucketName();
    const a = await start(bucket, 'ctl-a:1');
    await until('a acts', () => a.gate.isActing());
    const b = await start(bucket, 'ctl-b:2');
    await until('b stands by', () => b.actor.getSnapshot().value === 'contending');
    const gates = watchGates(a, b);
    a.actor.stop(); // no give-back: as after kill -9
    try {
      await until('b acts', () => gates.secondActsAt() !== undefined);
    } finally {
      gates.stop();
    }
    // Taken once it expired, not before: a's gate, left open to its deadline, had closed first.
    expect(gates.both()).toBe(false);
    expect(gates.firstQuietAt()).toBeLessThanOrEqual(gates.secondActsAt() as number);
    expect(b.gate.epoch()).toBeGreaterThan(a.gate.epoch());
  });
});
