import type { PlanSend } from '../../../machines/plan.machine';
import { upsertNode } from '../store/nodes.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { judgeFirstReport } from './judge-first-report';

describe('the first machine\'s report after the send', () => {
  const t = useTestStore('postgres');
  const at = new Date('2026-12-01T10:00:00Z');
  const digest = (n: number): string => n.toString(16).padStart(64, '0');
  let node = 0;
  let reportSequence = 0;

  /** A node sent generations 1..`generations` (digest n for generation n); the plan sent `sent`. */
  async function nodeSent(generations: number): Promise<string> {
    node += 1;
    const name = `n${node}`;
    await upsertNode(t.store, { name, lifecycle_state: 'revoked' }, at);
    for (let generation = 1; generation <= generations; generation += 1) {
      await t.store.query("INSERT INTO declarations (node, generation, epoch, kind, digest, sent_at) VALUES ($1, $2, 3, 'full', $3, $4)", [name, generation, digest(generation), at]);
    }
    return name;
  }

  async function report(name: string, fields: { generation: number; digest?: string | null; results?: unknown[]; refused?: unknown }): Promise<void> {
    reportSequence += 1;
    await t.store.query(
      `INSERT INTO reports (node, epoch, sequence, report_sequence, declaration_digest, generation, results, refused, version_running, sent_at, received_at)
       VALUES ($1, 3, $2, $3, $4, $2, $5, $6, '0.1.0', $7, $7)`,
      [name, fields.generation, reportSequence, fields.digest === undefined ? digest(fields.generation) : fields.digest, JSON.stringify(fields.results ?? []), fields.refused === undefined ? null : JSON.stringify(fields.refused), at],
    );
  }

  const send = (generation: number): PlanSend => ({ generation, digest: digest(generation), at: at.toISOString() });
  const applied = (key: string) => ({ key, shape: 'file', outcome: 'applied' });

  test('says nothing while the machine has reported only on earlier declarations', async () => {
    const name = await nodeSent(4);
    expect(await judgeFirstReport(t.store, name, send(4))).toBeUndefined();
    await report(name, { generation: 3, results: [applied('file:/srv/web/version')] });
    expect(await judgeFirstReport(t.store, name, send(4))).toBeUndefined();
  });

  test('applied when its report on the send has nothing failed', async () => {
    const name = await nodeSent(4);
    await report(name, { generation: 4, results: [applied('file:/srv/web/version'), { key: 'file:/etc/motd', shape: 'file', outcome: 'unchanged' }] });
    expect(await judgeFirstReport(t.store, name, send(4))).toEqual({ kind: 'applied', generation: 4 });
  });

  test('a report on a later declaration (the node sent again since) answers for the send too', async () => {
    const name = await nodeSent(5);
    await report(name, { generation: 5, results: [applied('file:/srv/web/version')] });
    expect(await judgeFirstReport(t.store, name, send(4))).toEqual({ kind: 'applied', generation: 5 });
  });

  test('failed, naming the resources and what the host said, when one failed or was refused', async () => {
    const name = await nodeSent(4);
    await report(name, {
      generation: 4,
      results: [
        { key: 'file:/srv/web/version', shape: 'file', outcome: 'failed', detail: 'a directory is at /srv/web/version' },
        { key: 'service:nginx', shape: 'service', outcome: 'refused' },
      ],
    });
    expect(await judgeFirstReport(t.store, name, send(4))).toEqual({
      kind: 'failed',
      generation: 4,
      reason: 'file:/srv/web/version failed (a directory is at /srv/web/version); service:nginx refused',
    });
  });

  test('failed when the host refused the declaration whole', async () => {
    const name = await nodeSent(4);
    await report(name, { generation: 3, refused: { reason: 'stale_epoch', generation: 4, epoch: 2, detail: 'epoch 2 is older than 3' } });
    expect(await judgeFirstReport(t.store, name, send(4))).toEqual({ kind: 'failed', generation: 4, reason: 'it refused the declaration (stale_epoch: epoch 2 is older than 3)' });
  });

  test('the newest report decides: a failure applied again later is applied', async () => {
    const name = await nodeSent(4);
    await report(name, { generation: 4, results: [{ key: 'file:/x', shape: 'file', outcome: 'failed' }] });
    await report(name, { generation: 4, results: [applied('file:/x')] });
    expect(await judgeFirstReport(t.store, name, send(4))).toMatchObject({ kind: 'applied' });
  });

  test('ignores a report naming a declaration other than the one recorded for its generation', async () => {
    const name = await nodeSent(4);
    await report(name, { generation: 4, digest: 'f'.repeat(64), results: [applied('file:/x')] });
    expect(await judgeFirstReport(t.store, name, send(4))).toBeUndefined();
  });
});
