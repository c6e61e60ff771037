import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { LEASE_TIMINGS, type LeaseTimings } from '../../../../machines/lease.machine';
import { startTestBroker, type TestBroker, type TestConnectionOptions } from '../../../../tests/broker/test-broker';
import { startTestPostgres, type TestPostgres } from '../../../shared/testing/test-postgres';
import type { KvBucket } from '../../serve/ensure-kv-bucket';
import { openStore } from '../../store/open-store';
import type { SqlStore } from '../../store/sql-store';
import { KvLease, type LeaseIdentity } from '../kv-lease';
import { openLeaseBucket } from '../lease-bucket';
import { startFreezeProxy, type FreezeProxy } from '../../../shared/testing/freeze-proxy';

/** A real broker and a real PostgreSQL store for the lease tests of one file. */
export interface LeaseWorld {
  readonly broker: TestBroker;
  readonly store: SqlStore;
  /** A bucket name no other test of the process uses, so leases of different tests never meet. */
  bucketName(): string;
  /**
   * A controller's lease on `bucket`: its own connection (through a freeze proxy when asked),
   * its own random identity, and a clock a test may replace.
   */
  controller(options: ControllerLeaseOptions): Promise<ControllerLease>;
}

/** What {@link LeaseWorld.controller} is asked for. */
export interface ControllerLeaseOptions {
  bucket: string;
  timings?: Partial<LeaseTimings>;
  /** Connect through a freeze proxy, to make this controller's broker stall. */
  proxied?: boolean;
  now?: () => number;
  /** Broker request timeout for the lease's bucket, in ms (short ones make stalls quick to see). */
  timeoutMs?: number;
  name?: string;
}

/** One controller's side of the lease in a test. */
export interface ControllerLease {
  lease: KvLease;
  bucket: KvBucket;
  nc: NatsConnection;
  identity: LeaseIdentity;
  timings: LeaseTimings;
  /** The proxy in front of this controller's connection, when it asked for one. */
  proxy: FreezeProxy | undefined;
  log: string[];
}

let buckets = 0;

/** Starts the broker and the store in beforeAll and stops them in afterAll. */
export function useLeaseWorld(): LeaseWorld {
  let broker: TestBroker | undefined;
  let postgres: TestPostgres | undefined;
  let store: SqlStore | undefined;
  const proxies: FreezeProxy[] = [];
  const connections: NatsConnection[] = [];
  beforeAll(async () => {
    [broker, postgres] = await Promise.all([startTestBroker(), startTestPostgres()]);
    store = await openStore({ url: postgres.url });
  }, 60_000);
  afterAll(async () => {
    for (const proxy of proxies) proxy.thaw();
    await Promise.allSettled(connections.map((connection) => connection.close()));
    await Promise.allSettled(proxies.map((proxy) => proxy.close()));
    await store?.close();
    await Promise.allSettled([broker?.stop(), postgres?.stop()]);
  });
  const world: LeaseWorld = {
    get broker() {
      if (broker === undefined) throw new Error('the lease world exists only inside its describe block');
      return broker;
    },
    get store() {
      if (store === undefined) throw new Error('the lease world exists only inside its describe block');
      return store;
    },
    bucketName: () => `lease-test-${process.pid}-${(buckets += 1)}`,
    controller: async (options) => {
      const timings = { ...LEASE_TIMINGS, ...options.timings };
      let proxy: FreezeProxy | undefined;
      const connectOptions: TestConnectionOptions = { name: options.name ?? 'lease test', reconnectTimeWait: 100, maxReconnectAttempts: -1 };
      let nc: NatsConnection;
      if (options.proxied === true) {
        proxy = await startFreezeProxy({ host: '127.0.0.1', port: world.broker.port });
        proxies.push(proxy);
        nc = await world.broker.connectAsController({ ...connectOptions, servers: `tls://127.0.0.1:${proxy.port}` } as TestConnectionOptions);
      } else {
        nc = await world.broker.connectAsController(connectOptions);
      }
      connections.push(nc);
      const bucket = await openLeaseBucket(nc, { ttlMs: timings.ttlMs, bucket: options.bucket, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) });
      const identity: LeaseIdentity = { controller: options.name ?? `test:${buckets}`, instance: randomBytes(8).toString('hex') };
      const log: string[] = [];
      const lease = new KvLease({
        bucket,
        store: world.store,
        identity,
        timings,
        ...(options.now === undefined ? {} : { now: options.now }),
        log: (line) => log.push(line),
      });
      return { lease, bucket, nc, identity, timings, proxy, log };
    },
  };
  return world;
}
