import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import type { Report } from '../../../schema/report';
import { HostStore } from '../store/host-store';
import { StateHandle } from '../store/state-handle';
import { LinkClock } from './link-clock';
import { ReportSender } from './report-sender';

// A connection that records what was published, in place of the broker.
class RecordingConnection {
  readonly published: Array<{ subject: string; report: Report }> = [];
  /** Whether the broker acknowledges a flush: false is a connection gone silent. */
  answers = true;
  publish(subject: string, data?: string | Uint8Array): void {
    this.published.push({ subject, report: JSON.parse(String(data)) as Report });
  }
  flush(): Promise<void> {
    return this.answers ? Promise.resolve() : new Promise(() => undefined);
  }
}

let dir: string;
let store: HostStore;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'report-sender-'));
  store = new HostStore(dir);
});
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

const now = () => new Date('2026-08-27T14:05:00.000Z');

// The host store, counting its writes.
class CountingStore extends HostStore {
  saves = 0;
  override async save(state: HostState): Promise<void> {
    this.saves += 1;
    await super.save(state);
  }
}

describe('sending reports', () => {
  test('each report takes the next report_sequence, stored before it is published on the node\'s report subject', async () => {
    const state = new StateHandle(store, { ...emptyHostState(), report_sequence: 7 });
    const connection = new RecordingConnection();
    const sender = new ReportSender({ node: 'alpha', state, clock: new LinkClock(null), connection: () => connection, now });

    expect(await sender.send({ results: [], held: null })).toBe(true);
    expect(await sender.send({ results: [], held: null, refused: { ok: false, reason: 'foreign_key', detail: 'signed by another key' } })).toBe(true);

    expect(connection.published.map((p) => p.subject)).toEqual(['mesh.node.alpha.report', 'mesh.node.alpha.report']);
    expect(connection.published.map((p) => p.report.report_sequence)).toEqual([8, 9]);
    expect(connection.published[1]?.report.refused).toEqual({ reason: 'foreign_key', detail: 'signed by another key' });
    expect((await store.load()).state.report_sequence).toBeGreaterThanOrEqual(9);
  });

  test('a host restarted over its store (after a crash, say) never sends a report_sequence it sent before', async () => {
    const first = new StateHandle(store, emptyHostState());
    const connection = new RecordingConnection();
    const before = new ReportSender({ node: 'alpha', state: first, clock: new LinkClock(null), connection: () => connection, now });
    await before.send({ results: [], held: null });
    await before.send({ results: [], held: null });

    const again = new StateHandle(store, (await store.load()).state);
    const after = new ReportSender({ node: 'alpha', state: again, clock: new LinkClock(null), connection: () => connection, now });
    await after.send({ results: [], held: null });

    const sent = connection.published.map((p) => p.report.report_sequence);
    expect(sent[2]).toBeGreaterThan(Math.max(sent[0] as number, sent[1] as number));
  });

  test('reports do not each cost a store write, and a prepared sender writes nothing to send', async () => {
    const counting = new CountingStore(dir);
    const state = new StateHandle(counting, emptyHostState());
    const sender = new ReportSender({ node: 'alpha', state, clock: new LinkClock(null), connection: () => new RecordingConnection(), now });
    await sender.prepare();
    expect(counting.saves).toBe(1);
    for (let index = 0; index < 10; index += 1) await sender.send({ results: [], held: null });
    expect(counting.saves).toBe(1);
  });

  test('a confirmed send says false, and owes the report, when the broker does not acknowledge it (a silent link)', async () => {
    const state = new StateHandle(store, emptyHostState());
    const connection = new RecordingConnection();
    const sender = new ReportSender({ node: 'alpha', state, clock: new LinkClock(null), connection: () => connection, now });

    expect(await sender.send({ results: [], held: null }, { confirm: true })).toBe(true);
    expect(sender.takeOwed()).toBe(false);
    connection.answers = false;
    expect(await sender.send({ results: [], held: null }, { confirm: true, confirmMs: 50 })).toBe(false);
    expect(sender.takeOwed()).toBe(true);
  });

  test('with no connection nothing is counted or sent, and the report is owed once', async () => {
    const state = new StateHandle(store, emptyHostState());
    const sender = new ReportSender({ node: 'alpha', state, clock: new LinkClock(null), connection: () => null, now });
    expect(await sender.send({ results: [], held: null })).toBe(false);
    expect(state.current().report_sequence).toBe(0);
    expect(sender.takeOwed()).toBe(true);
    expect(sender.takeOwed()).toBe(false);
  });
});
