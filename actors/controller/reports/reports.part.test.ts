import type { NatsConnection } from '@nats-io/transport-node';
import { heartbeatSubject, reportSubject } from '../../shared/bus/subjects';
import { eventually, useTestController, type ReadDeclaration } from '../enrolment/testing/test-controller';
import { getNode } from '../store/nodes.repo';
import { reportRefusalCounts } from '../store/reports.repo';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { sendCurrent } from '../declarations/send-current';
import { REPORT_LOST_AFTER_MS } from './resend-on-lost-report';

describe('the report receiver', () => {
  const t = useTestController('postgres');
  let node: NatsConnection;
  let overlay: ReadDeclaration;
  let full: ReadDeclaration;

  const reportGeneration = async (): Promise<number | undefined> =>
    (await t.ctx.store.query<{ report_generation: number | null }>('SELECT report_generation FROM nodes WHERE name = $1', ['papa']))[0]?.report_generation ?? undefined;
  const refusals = async (reason: string): Promise<number> =>
    (await reportRefusalCounts(t.ctx.store)).find((row) => row.node === 'papa' && row.reason === reason)?.count ?? 0;

  beforeAll(async () => {
    const token = await t.issue();
    const machine = t.machine('papa');
    await t.enrol(token, t.requestFor(machine, token));
    node = await t.connectNode('papa', machine);
    overlay = await t.nextDeclaration(node, 'papa');
    await t.report(node, overlay, { sequence: 1, report_sequence: 1 });
    full = await t.nextDeclaration(node, 'papa');
    await t.report(node, full, { sequence: 2, report_sequence: 2 });
    await eventually(async () => (await reportGeneration()) === full.declaration.generation || undefined, 'the report on the full declaration');
  });

  test('keeps the latest report\'s brief on the node: the declaration it answers and how its resources came out', async () => {
    const [row] = await t.ctx.store.query<{ report_declaration_digest: string; report_summary: unknown; owned: { resources: unknown[] } }>(
      'SELECT report_declaration_digest, report_summary, owned FROM nodes WHERE name = $1',
      ['papa'],
    );
    expect(row?.report_declaration_digest).toBe(full.digest);
    expect(row?.report_summary).toEqual({ outcomes: { applied: full.declaration.resources.length } });
    expect(row?.owned.resources).toHaveLength(full.declaration.resources.length);
  });

  test('refuses and counts a report older than the latest, and keeps the latest', async () => {
    const before = await refusals('older');
    await t.report(node, overlay, { sequence: 1, report_sequence: 1 });
    await eventually(async () => ((await refusals('older')) === before + 1 ? true : undefined), 'the older report to be counted');
    const kept = await t.ctx.store.query('SELECT 1 FROM reports WHERE node = $1', ['papa']);
    expect(kept).toHaveLength(2);
    expect(await reportGeneration()).toBe(full.declaration.generation);
  });

  test('counts the same report sent again as a duplicate', async () => {
    const before = await refusals('duplicate');
    await t.report(node, full, { sequence: 2, report_sequence: 2 });
    await eventually(async () => ((await refusals('duplicate')) === before + 1 ? true : undefined), 'the duplicate to be counted');
  });

  test('refuses and counts, against the sender, a report naming another node than its subject', async () => {
    const before = await refusals('wrong_subject');
    const forged = { ...(await reportBody(full)), node: 'quebec', sequence: 9, report_sequence: 9 };
    node.publish(reportSubject('papa'), JSON.stringify(forged));
    await eventually(async () => ((await refusals('wrong_subject')) === before + 1 ? true : undefined), 'the report for another node to be counted');
    expect(await t.ctx.store.query('SELECT 1 FROM reports WHERE node = $1', ['quebec'])).toHaveLength(0);
  });

  test('refuses and counts a report that does not match the contract', async () => {
    const before = await refusals('malformed');
    node.publish(reportSubject('papa'), JSON.stringify({ node: 'papa', sequence: 'many' }));
    node.publish(reportSubject('papa'), 'not json');
    await eventually(async () => ((await refusals('malformed')) === before + 2 ? true : undefined), 'the malformed reports to be counted');
  });

  const declarationsSent = async (): Promise<number> => (await t.ctx.store.query('SELECT 1 FROM declarations WHERE node = $1', ['papa'])).length;
  const refusalKept = (reportSequence: number) =>
    eventually(
      async () => {
        const rows = await t.ctx.store.query<{ refused: { reason: string } }>('SELECT refused FROM reports WHERE node = $1 AND report_sequence = $2', ['papa', reportSequence]);
        return rows.length === 1 ? rows : undefined;
      },
      'the refusal report to be kept',
    );

  test('keeps and logs a report saying the host refused a declaration, and moves nothing along', async () => {
    const refused = {
      ...(await reportBody(full)),
      sequence: 2,
      report_sequence: 3,
      results: [],
      refused: { reason: 'older_generation', generation: full.declaration.generation, epoch: 3, detail: 'not newer than the generation applied' },
    };
    const sentBefore = await declarationsSent();
    node.publish(reportSubject('papa'), JSON.stringify(refused));
    const [row] = await refusalKept(3);
    expect(row?.refused.reason).toBe('older_generation');
    expect(t.logs.some((line) => line.includes('node papa refused a declaration (older_generation'))).toBe(true);
    await t.settled();
    expect(await declarationsSent()).toBe(sentBefore);
  });

  test('sends the node its current declaration again when it refused one of an older epoch, which may have hidden this controller\'s', async () => {
    const refused = {
      ...(await reportBody(full)),
      sequence: 2,
      report_sequence: 4,
      results: [],
      refused: { reason: 'stale_epoch', generation: full.declaration.generation + 1, epoch: 1, detail: 'epoch 1 is older than 3' },
    };
    const sentBefore = await declarationsSent();
    node.publish(reportSubject('papa'), JSON.stringify(refused));
    await refusalKept(4);
    const again = await t.nextDeclaration(node, 'papa');
    expect(again.declaration).toMatchObject({ kind: 'full', epoch: 3 });
    expect(again.declaration.generation).toBeGreaterThan(full.declaration.generation);
    expect(again.declaration.resources).toEqual(full.declaration.resources);
    await t.settled();
    expect(await declarationsSent()).toBe(sentBefore + 1);
    expect(t.logs.some((line) => line.includes('node papa: refused a declaration of epoch 1; its full declaration sent again under epoch 3'))).toBe(true);
    full = again;
  });

  test('sends nothing again when the epoch refused is this controller\'s own: the node has seen a newer one', async () => {
    const refused = {
      ...(await reportBody(full)),
      sequence: 2,
      report_sequence: 5,
      results: [],
      refused: { reason: 'stale_epoch', generation: full.declaration.generation, epoch: 3, detail: 'epoch 3 is older than 4' },
    };
    const sentBefore = await declarationsSent();
    node.publish(reportSubject('papa'), JSON.stringify(refused));
    await refusalKept(5);
    await t.settled();
    expect(await declarationsSent()).toBe(sentBefore);
  });

  test('a heartbeat moves last seen to the controller\'s now', async () => {
    t.advanceClock(90_000);
    try {
      const expected = t.ctx.now().getTime();
      node.publish(heartbeatSubject('papa'), JSON.stringify({
        node: 'papa', sent_at: new Date().toISOString(), version_running: '0.1.0', host_kind: 'resident',
        seconds_since_linked: 0, last_reconcile_at: null, uptime_seconds: 12,
      }));
      const seen = await eventually(async () => {
        const at = (await getNode(t.ctx.store, 'papa'))?.last_seen_at?.getTime() ?? 0;
        return at >= expected ? at : undefined;
      }, 'last seen to move');
      // Within the controller's own clock while the heartbeat was handled (the node's sent_at
      // is 90 s behind it), however long the handling took.
      expect(seen).toBeLessThanOrEqual(t.ctx.now().getTime());
    } finally {
      t.advanceClock(-90_000);
    }
  });

  test('sends a node its declaration again, once, when a heartbeat says it made a pass long after a send it has not reported on', async () => {
    const beat = async (passAgoMs: number): Promise<void> => {
      t.advanceClock(1000);
      moved += 1000;
      const expected = t.ctx.now().getTime();
      const sent = new Date();
      node.publish(heartbeatSubject('papa'), JSON.stringify({
        node: 'papa', sent_at: sent.toISOString(), version_running: '0.1.0', host_kind: 'resident',
        seconds_since_linked: 0, last_reconcile_at: new Date(sent.getTime() - passAgoMs).toISOString(), uptime_seconds: 12,
      }));
      await eventually(async () => (((await getNode(t.ctx.store, 'papa'))?.last_seen_at?.getTime() ?? 0) >= expected ? true : undefined), 'the heartbeat to be taken');
      // The resend, when there is one, runs in the node's queue after the heartbeat is recorded.
      await nodeWorkQueue(t.ctx).run('papa', async () => undefined);
    };
    let moved = 0;
    try {
      const sent = await nodeWorkQueue(t.ctx).run('papa', () => sendCurrent(t.ctx, 'papa'));
      const lost = await t.nextDeclaration(node, 'papa');
      expect(lost.declaration.generation).toBe(sent?.generation);
      // Its report never comes. A pass just now, right after the send: the report may be on its way.
      const before = await declarationsSent();
      await beat(0);
      expect(await declarationsSent()).toBe(before);
      // Well past the bound, but the node's last pass was before the send (by its own clock).
      t.advanceClock(REPORT_LOST_AFTER_MS + 10_000);
      moved += REPORT_LOST_AFTER_MS + 10_000;
      await beat(REPORT_LOST_AFTER_MS + 20_000);
      expect(await declarationsSent()).toBe(before);
      // A pass since the send, and still no report: it was lost, and the node is sent its declaration again.
      await beat(5000);
      const again = await t.nextDeclaration(node, 'papa');
      expect(again.declaration.generation).toBeGreaterThan(lost.declaration.generation);
      expect(await declarationsSent()).toBe(before + 1);
      // Once: the one sent again goes unreported too, and is left to the watchdog.
      t.advanceClock(REPORT_LOST_AFTER_MS + 10_000);
      moved += REPORT_LOST_AFTER_MS + 10_000;
      await beat(5000);
      expect(await declarationsSent()).toBe(before + 1);
      // Its report comes, and the node is square.
      await t.report(node, again, { sequence: 3, report_sequence: 40 });
      await eventually(async () => ((await reportGeneration()) === again.declaration.generation ? true : undefined), 'the report on the declaration sent again');
    } finally {
      t.advanceClock(-moved);
    }
  });
});

/** The report the node sent on `read`, as the test controller builds it, for tests to alter. */
async function reportBody(read: ReadDeclaration): Promise<Record<string, unknown>> {
  const at = new Date().toISOString();
  return {
    node: read.declaration.node,
    epoch: read.declaration.epoch,
    sequence: 2,
    report_sequence: 2,
    declaration_digest: read.digest,
    generation: read.declaration.generation,
    results: [],
    owned: { resources: [] },
    version_running: '0.1.0',
    seconds_since_linked: 0,
    sent_at: at,
  };
}
