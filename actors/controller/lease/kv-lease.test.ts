import { LeaseHolder } from '../../../schema/lease-holder';
import { raiseEpochFloor, readEpochFloor } from '../store/controller-epoch.repo';
import { StorageType } from '@nats-io/jetstream';
import { LEASE_KEY, openLeaseBucket } from './lease-bucket';
import { LeaseHeldElsewhere, LeaseKeyForeign, LeaseRenewalRefused, LeaseUnreachable } from './lease-errors';
import { useLeaseWorld } from './testing/lease-world';

// The lease's operations over a real nats-server's KV bucket and a real PostgreSQL epoch floor.

const world = useLeaseWorld();
const never = new AbortController().signal;

async function resetFloor(): Promise<void> {
  await world.store.query('DELETE FROM controller_epoch');
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('KvLease', () => {
  beforeEach(resetFloor);

  test('takes the lease at the revision it creates, raises the epoch floor to it and says who holds it', async () => {
    const a = await world.controller({ bucket: world.bucketName(), name: 'ctl-a:1' });
    const taken = await a.lease.take(never);
    expect(taken.epoch).toBe(1);
    expect(taken.revision).toBe(1);
    expect(await readEpochFloor(world.store)).toMatchObject({ epoch: 1, holder: 'ctl-a:1' });
    const current = await a.lease.current();
    expect(current?.revision).toBe(1);
    expect(LeaseHolder.parse(current?.holder)).toMatchObject({ controller: 'ctl-a:1', instance: a.identity.instance });
  });

  test('keeps one value per key on disk, aged out after the lease\'s age, and puts a changed age limit back', async () => {
    const a = await world.controller({ bucket: world.bucketName() });
    const { config } = await a.bucket.jsm.streams.info(a.bucket.stream);
    expect(config).toMatchObject({ max_age: 15_000 * 1_000_000, max_msgs_per_subject: 1, storage: StorageType.File });
    await a.bucket.jsm.streams.update(a.bucket.stream, { max_age: 60_000 * 1_000_000 });
    const reopened = await openLeaseBucket(a.nc, { ttlMs: 15_000, bucket: a.bucket.stream.slice('KV_'.length) });
    expect((await reopened.jsm.streams.info(reopened.stream)).config.max_age).toBe(15_000 * 1_000_000);
  });

  test('refuses a second controller while the first holds it, naming the holder', async () => {
    const bucket = world.bucketName();
    const a = await world.controller({ bucket, name: 'ctl-a:1' });
    const b = await world.controller({ bucket, name: 'ctl-b:2' });
    await a.lease.take(never);
    const error = await caught(b.lease.take(never));
    expect(error).toBeInstanceOf(LeaseHeldElsewhere);
    expect((error as LeaseHeldElsewhere).refused).toBe(true);
    expect((error as LeaseHeldElsewhere).holder).toMatch(/^ctl-a:1 \(since \d{4}-.*Z\)$/);
  });

  test('a value no controller wrote in the key is LeaseKeyForeign to the holder\'s renewal and to a take, saying so', async () => {
    const bucket = world.bucketName();
    const a = await world.controller({ bucket, name: 'ctl-a:1' });
    const b = await world.controller({ bucket, name: 'ctl-b:2' });
    const taken = await a.lease.take(never);
    await b.bucket.kv.put(LEASE_KEY, '{"controller":"not really"}');
    const renewal = await caught(a.lease.renew(taken.revision));
    expect(renewal).toBeInstanceOf(LeaseKeyForeign);
    expect(renewal).toMatchObject({ refused: true, foreign: true });
    expect((renewal as Error).message).toMatch(/^the lease key holds a value no controller wrote \(revision \d+, 27 bytes\)/);
    expect(await caught(b.lease.take(never))).toBeInstanceOf(LeaseKeyForeign);
  });

  test('measures the deadline from when the write was sent: the age limit less the margin', async () => {
    let clock = 1_000;
    const a = await world.controller({ bucket: world.bucketName(), now: () => clock, timings: { ttlMs: 15_000, marginMs: 3_000 } });
    const taken = await a.lease.take(never);
    expect(taken.actingUntil).toBe(13_000);
    clock = 6_000;
    expect((await a.lease.renew(taken.revision)).actingUntil).toBe(18_000);
  });

  test('renews by compare-and-set, and refuses a renewal once another controller has written the key', async () => {
    const bucket = world.bucketName();
    const a = await world.controller({ bucket });
    const b = await world.controller({ bucket, name: 'ctl-b:2' });
    const taken = await a.lease.take(never);
    const renewed = await a.lease.renew(taken.revision);
    expect(renewed.revision).toBe(taken.revision + 1);
    // b takes the key from under a (as if a's lease had expired and b took it).
    await b.bucket.kv.delete(LEASE_KEY);
    await b.lease.take(never);
    const error = await caught(a.lease.renew(renewed.revision));
    expect(error).toBeInstanceOf(LeaseRenewalRefused);
    expect((error as Error).message).toMatch(/the lease is held by ctl-b:2/);
  });

  test('refuses a renewal after the key expired', async () => {
    const a = await world.controller({ bucket: world.bucketName(), timings: { ttlMs: 300 } });
    const taken = await a.lease.take(never);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const error = await caught(a.lease.renew(taken.revision));
    expect(error).toBeInstanceOf(LeaseRenewalRefused);
    expect((error as Error).message).toContain('the key is gone (it expired)');
  });

  test('takes as its own a renewal that landed after its answer was given up on', async () => {
    const a = await world.controller({ bucket: world.bucketName() });
    const taken = await a.lease.take(never);
    // The earlier renewal's write, landed late: the key moved on, still holding a's value.
    const landed = await a.bucket.kv.update(LEASE_KEY, (await a.bucket.kv.get(LEASE_KEY))!.string(), taken.revision);
    const renewed = await a.lease.renew(taken.revision);
    expect(renewed.revision).toBe(landed + 1);
  });

  test('raises a bucket made again from nothing past the epoch floor, so the epoch never goes back', async () => {
    await raiseEpochFloor(world.store, 5_000, 'an earlier controller', new Date());
    const a = await world.controller({ bucket: world.bucketName() });
    const taken = await a.lease.take(never);
    expect(taken.epoch).toBe(5_001);
    expect(taken.revision).toBe(5_001);
    expect((await a.lease.current())?.revision).toBe(5_001);
    expect((await readEpochFloor(world.store))?.epoch).toBe(5_001);
    expect(a.log.join('\n')).toContain('not above the store\'s epoch floor 5000');
    // Renewals go on from there.
    expect((await a.lease.renew(taken.revision)).revision).toBe(5_002);
  });

  test('gives the lease back at its revision, and another controller takes it at once under a higher epoch', async () => {
    const bucket = world.bucketName();
    const a = await world.controller({ bucket });
    const b = await world.controller({ bucket });
    const taken = await a.lease.take(never);
    const renewed = await a.lease.renew(taken.revision);
    const freed: string[] = [];
    const stop = b.lease.watchFreed(() => freed.push('freed'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.lease.release(renewed.revision);
    expect(await a.lease.current()).toBeNull();
    const took = await b.lease.take(never);
    expect(took.epoch).toBeGreaterThan(taken.epoch);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(freed).toEqual(['freed']);
    stop();
  });

  test('does not give back a lease that is not its own any more', async () => {
    const bucket = world.bucketName();
    const a = await world.controller({ bucket });
    const b = await world.controller({ bucket });
    const taken = await a.lease.take(never);
    await b.bucket.kv.delete(LEASE_KEY);
    const theirs = await b.lease.take(never);
    await expect(a.lease.release(taken.revision)).rejects.toBeInstanceOf(LeaseRenewalRefused);
    expect((await b.lease.current())?.revision).toBe(theirs.revision);
  });

  test('says the broker could not be asked, not that the lease was refused, when its link stalls', async () => {
    const a = await world.controller({ bucket: world.bucketName(), proxied: true, timeoutMs: 300 });
    const taken = await a.lease.take(never);
    a.proxy?.freeze();
    const error = await caught(a.lease.renew(taken.revision));
    a.proxy?.thaw();
    expect(error).toBeInstanceOf(LeaseUnreachable);
    expect((error as LeaseUnreachable).refused).toBe(false);
    // The stalled renewal landed once the link came back: the next one still finds the key its own.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await a.lease.renew(taken.revision)).revision).toBeGreaterThan(taken.revision + 1);
  });
});
