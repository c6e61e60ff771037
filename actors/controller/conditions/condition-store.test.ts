import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { ConditionEvent } from '../../../schema/condition';
import { startFreezeProxy, type FreezeProxy } from '../../shared/testing/freeze-proxy';
import { NotActing } from '../lease/lease-errors';
import { eventually } from '../serve/testing/eventually';
import { openConditionBuckets, type ConditionBuckets } from './condition-buckets';
import { ConditionNotFound, ConditionWrittenUnderLaterEpoch } from './condition-errors';
import { ConditionOutbox } from './condition-outbox';
import { ConditionStore, REOPEN_WITHIN_MS, type ConditionFence, type Finding } from './condition-store';
import { CONTROLLER_EVENT_ROOT } from './condition-subjects';
import { readConditionHistory } from './read-condition-history';
import { SIGNALS } from './signals-table';
import { WATCHDOG_SETTINGS } from './watchdog-settings';
import type { WatchdogView } from './watchdog-view';
import { watchOnce } from './watch-once';
import type { SilenceMade } from './silence-made';

// The condition store over a real TLS broker's KV buckets: what a person's silence and the
// watchdog write, at once and across epochs, and what history and the events say of it.

/** The lease as a test sets it: acting or not, under an epoch. */
class FakeFence implements ConditionFence {
  constructor(public current: number, public acting = true) {}
  assertActing(what: string): void {
    if (!this.acting) throw new NotActing(what, 'the test took the lease away');
  }
  epoch(): number {
    return this.current;
  }
}

const T0 = new Date('2026-11-02T10:00:00.000Z');
const at = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000);
const WAIT = { timeoutMs: 15_000 };

function finding(subject: string, detail = `node ${subject} is silent`): Finding {
  return { id: `heartbeat-silent.${subject}`, kind: 'heartbeat-silent', signal: 'S1', subject, severity: 'warning', detail, show: `mesh-control nodes ${subject}` };
}

describe('the condition store', () => {
  let broker: TestBroker;
  let nc: NatsConnection;
  let other: NatsConnection;
  let run = 0;
  const events: ConditionEvent[] = [];
  let subscription: Subscription;

  beforeAll(async () => {
    broker = await startTestBroker();
    nc = await broker.connectAsController();
    other = await broker.connectAsController();
    subscription = nc.subscribe(`${CONTROLLER_EVENT_ROOT}.>`, { callback: (_error, message) => {
      events.push(ConditionEvent.parse(message.json()));
    } });
  }, 60_000);

  afterAll(async () => {
    subscription?.unsubscribe();
    await broker?.stop();
  });

  /** A store of its own buckets, and a second store over the same buckets through another connection. */
  async function world(fence = new FakeFence(5)): Promise<{ buckets: ConditionBuckets; store: ConditionStore; rival: ConditionStore; logs: string[]; silences: SilenceMade[] }> {
    run += 1;
    const names = { conditions: `conditions-test-${run}`, history: `history-test-${run}` };
    const buckets = await openConditionBuckets(nc, names);
    const rivalBuckets = await openConditionBuckets(other, names);
    const logs: string[] = [];
    const silences: SilenceMade[] = [];
    const store = new ConditionStore({ kv: buckets.conditions.kv, outbox: new ConditionOutbox({ nc, history: buckets.history.kv, log: (line) => logs.push(line) }), fence, log: (line) => logs.push(line), onSilenceMade: (made) => void silences.push(made) });
    const rival = new ConditionStore({ kv: rivalBuckets.conditions.kv, outbox: new ConditionOutbox({ nc: other, history: rivalBuckets.history.kv, log: (line) => logs.push(line) }), fence, log: (line) => logs.push(line) });
    return { buckets, store, rival, logs, silences };
  }

  test('raises a condition once, writes nothing for the same finding again, and keeps and publishes the transition', async () => {
    const { buckets, store } = await world();
    expect(await store.raise(finding('kitchen'), at(0))).toBe('condition-raised');
    expect(await store.raise(finding('kitchen'), at(1))).toBeNull();
    expect(await store.open(at(1))).toEqual([expect.objectContaining({ id: 'heartbeat-silent.kitchen', state: 'open', count: 1, epoch: 5, raised_at: T0.toISOString(), silence: null })]);
    const history = await readConditionHistory(buckets.history.kv, { limit: 10 });
    expect(history.map((event) => [event.event, event.id, event.change])).toEqual([['condition-raised', 'heartbeat-silent.kitchen', 'raised']]);
    await eventually('the raising is published', () => events.some((event) => event.id === 'heartbeat-silent.kitchen' && event.at === T0.toISOString()), WAIT);
  });

  test('a condition cleared and raised again within ten minutes is the same condition, its count up and its silence kept', async () => {
    const { buckets, store, silences } = await world();
    await store.raise(finding('shelf'), at(0));
    await store.silence('heartbeat-silent.shelf', { by: 'ana@desk', why: 'moving racks', until: at(120) }, at(1));
    expect(await store.clear('heartbeat-silent.shelf', at(2), 'no longer seen')).toBe('condition-cleared');
    expect(await store.open(at(2))).toEqual([]);
    expect(await store.raise(finding('shelf'), at(2 + 9))).toBe('condition-raised');
    const reopened = await store.get('heartbeat-silent.shelf');
    expect(reopened).toMatchObject({ state: 'open', count: 2, raised_at: T0.toISOString(), cleared_at: null, silence: { by: 'ana@desk', why: 'moving racks', until: at(120).toISOString() } });
    expect(silences.map((made) => [made.condition.id, made.silence.why, made.previous])).toEqual([['heartbeat-silent.shelf', 'moving racks', null]]);
    const history = await readConditionHistory(buckets.history.kv, { id: 'heartbeat-silent.shelf', limit: 10 });
    expect(history.map((event) => event.event)).toEqual(['condition-raised', 'condition-cleared', 'condition-changed', 'condition-raised']);
    expect(history[2]).toMatchObject({ why: 'moving racks', change: expect.stringContaining('silenced by ana@desk') });
  });

  test('raised again more than ten minutes after its clearing, it is a new condition without the old silence', async () => {
    const { store } = await world();
    await store.raise(finding('attic'), at(0));
    await store.silence('heartbeat-silent.attic', { by: 'ana@desk', why: 'known', until: at(600) }, at(1));
    await store.clear('heartbeat-silent.attic', at(2), 'no longer seen');
    // Not swept yet within the ten minutes; swept after.
    expect(await store.sweep(at(2 + 5))).toEqual([]);
    expect(await store.sweep(new Date(at(2).getTime() + REOPEN_WITHIN_MS + 1))).toEqual(['heartbeat-silent.attic']);
    expect(await store.get('heartbeat-silent.attic')).toBeNull();
    await store.raise(finding('attic'), at(30));
    expect(await store.get('heartbeat-silent.attic')).toMatchObject({ count: 1, raised_at: at(30).toISOString(), silence: null });
  });

  test('a person\'s silence and the watchdog\'s observation made at the same moment from two connections both land', async () => {
    const { store, rival } = await world();
    await store.raise(finding('cellar', 'detail 0'), at(0));
    for (let round = 1; round <= 15; round += 1) {
      await Promise.all([
        store.silence('heartbeat-silent.cellar', { by: 'ana@desk', why: `round ${round}`, until: at(60) }, at(round)),
        rival.raise(finding('cellar', `detail ${round}`), at(round)),
      ]);
      const now = await store.get('heartbeat-silent.cellar');
      expect([now?.detail, now?.silence?.why]).toEqual([`detail ${round}`, `round ${round}`]);
    }
  });

  test('writes nothing off the lease, nor over a condition a controller under a later epoch wrote', async () => {
    const fence = new FakeFence(5);
    const { store, buckets } = await world(fence);
    fence.acting = false;
    await expect(store.raise(finding('porch'), at(0))).rejects.toBeInstanceOf(NotActing);
    expect(await store.get('heartbeat-silent.porch')).toBeNull();
    fence.acting = true;
    fence.current = 9;
    await store.raise(finding('porch'), at(0));
    fence.current = 5;
    await expect(store.clear('heartbeat-silent.porch', at(1), 'no longer seen')).rejects.toBeInstanceOf(ConditionWrittenUnderLaterEpoch);
    await expect(store.silence('heartbeat-silent.porch', { by: 'old@controller', why: 'stale', until: at(10) }, at(1))).rejects.toBeInstanceOf(ConditionWrittenUnderLaterEpoch);
    expect(await store.get('heartbeat-silent.porch')).toMatchObject({ state: 'open', epoch: 9, silence: null });
    expect((await readConditionHistory(buckets.history.kv, { limit: 10 })).map((event) => event.epoch)).toEqual([9]);
  });

  test('refuses to silence an id it does not keep, naming the id and where to look', async () => {
    const { store } = await world();
    const error = await store.silence('heartbeat-silent.nowhere', { by: 'ana@desk', why: 'x', until: at(10) }, at(0)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConditionNotFound);
    expect((error as ConditionNotFound).value).toBe('heartbeat-silent.nowhere');
    expect((error as ConditionNotFound).next).toContain('mesh-control conditions');
  });

  test('a row of the watchdog that cannot see raises probe-failed and clears nothing; seeing again clears both', async () => {
    const { store } = await world();
    let heard: WatchdogView['heardNodes'] = async () => [{ name: 'garage', kind: 'resident', heardAt: at(0) }];
    const view: WatchdogView = {
      heardNodes: () => heard(),
      unreportedSends: async () => [],
      runningCalls: async () => [],
      doctorLast: async () => ({ at: at(100).toISOString(), source: 'serving', ok: true, probes: [] }),
      eventLoopHeldMs: async () => 0,
      openPlans: async () => [],
      staleRefusals: async () => [],
      busAdvisories: async () => [],
      watchingSince: () => at(-60),
    };
    expect((await watchOnce(SIGNALS, view, store, WATCHDOG_SETTINGS, at(100))).raised).toEqual(['heartbeat-silent.garage']);
    heard = async () => {
      throw new Error('the store did not answer');
    };
    const blind = await watchOnce(SIGNALS, view, store, WATCHDOG_SETTINGS, at(101));
    expect(blind).toMatchObject({ raised: ['probe-failed.heartbeat-silent'], cleared: [], blind: ['heartbeat-silent'] });
    expect((await store.open(at(101))).map((condition) => condition.id)).toEqual(['probe-failed.heartbeat-silent', 'heartbeat-silent.garage']);
    expect((await store.get('probe-failed.heartbeat-silent'))?.detail).toContain('the store did not answer');
    heard = async () => [{ name: 'garage', kind: 'resident', heardAt: at(101) }];
    expect((await watchOnce(SIGNALS, view, store, WATCHDOG_SETTINGS, at(102))).cleared.sort()).toEqual(['heartbeat-silent.garage', 'probe-failed.heartbeat-silent']);
  });

  test('a controller just started keeps the conditions its rows cannot judge yet, instead of clearing them', async () => {
    const { store } = await world();
    const view: WatchdogView = {
      heardNodes: async () => [{ name: 'loft', kind: 'resident', heardAt: at(0) }],
      unreportedSends: async () => [],
      runningCalls: async () => [],
      doctorLast: async () => undefined,
      eventLoopHeldMs: async () => 0,
      openPlans: async () => [],
      staleRefusals: async () => [],
      busAdvisories: async () => [],
      watchingSince: () => at(100),
    };
    // Raised by the controller before the restart: the heartbeat row and a doctor's probe.
    await store.raise(finding('loft'), at(5));
    await store.raise({ id: 'doctor-failing.lease', kind: 'doctor-failing', signal: 'S10', subject: 'lease', severity: 'urgent', detail: 'not renewed', show: 'mesh-control doctor' }, at(5));
    const early = await watchOnce(SIGNALS, view, store, WATCHDOG_SETTINGS, new Date(at(100).getTime() + 1_000));
    expect(early.cleared).toEqual([]);
    expect((await store.open(at(100))).map((condition) => condition.id).sort()).toEqual(['doctor-failing.lease', 'heartbeat-silent.loft']);
  });
});

describe('the transitions while the bus is away', () => {
  let broker: TestBroker;
  let proxy: FreezeProxy;
  let nc: NatsConnection;

  beforeAll(async () => {
    broker = await startTestBroker();
    proxy = await startFreezeProxy({ host: '127.0.0.1', port: broker.port });
    nc = await broker.connectAsController({ servers: `tls://127.0.0.1:${proxy.port}`, reconnectTimeWait: 100, maxReconnectAttempts: -1 } as never);
  }, 60_000);

  afterAll(async () => {
    proxy?.thaw();
    await nc?.close().catch(() => undefined);
    await proxy?.close();
    await broker?.stop();
  });

  test('are offered again once it is back, in order, none lost', async () => {
    const buckets = await openConditionBuckets(nc, { conditions: 'away-conditions', history: 'away-history' });
    const direct = await broker.connectAsController();
    const seen: string[] = [];
    const subscription = direct.subscribe(`${CONTROLLER_EVENT_ROOT}.>`, { callback: (_error, message) => {
      seen.push(`${message.json<ConditionEvent>().event} ${message.json<ConditionEvent>().id}`);
    } });
    await direct.flush();
    const logs: string[] = [];
    const outbox = new ConditionOutbox({ nc, history: buckets.history.kv, log: (line) => logs.push(line), confirmWithinMs: 500 });
    const event = (id: string, name: ConditionEvent['event']): ConditionEvent => ({ ...finding(id), id: `heartbeat-silent.${id}`, state: 'open', raised_at: T0.toISOString(), changed_at: T0.toISOString(), cleared_at: null, count: 1, epoch: 5, silence: null, event: name, at: T0.toISOString(), change: 'raised', why: null });
    proxy.freeze();
    await outbox.offer('heartbeat-silent.gone.1', event('gone', 'condition-raised'));
    await outbox.offer('heartbeat-silent.gone.2', event('gone', 'condition-cleared'));
    expect(outbox.waiting()).toBe(2);
    expect(logs.some((line) => line.includes('wait for the bus'))).toBe(true);
    proxy.thaw();
    await eventually('every transition is delivered', async () => {
      await outbox.flush();
      return outbox.waiting() === 0;
    }, WAIT);
    await eventually('both events are published, in order', () => seen.length >= 2, WAIT);
    expect(seen).toEqual(['condition-raised heartbeat-silent.gone', 'condition-cleared heartbeat-silent.gone']);
    expect((await readConditionHistory(buckets.history.kv, { limit: 10 })).length).toBe(2);
    subscription.unsubscribe();
    await direct.close();
  }, 60_000);
});
