import type { Condition } from '../../../schema/condition';
import { generateNodeIdentity, ready } from '../../shared/crypto';
import { LeaseGate } from '../lease/lease-gate';
import { upsertNode } from '../store/nodes.repo';
import { countRefusalOf, UNKNOWN_SENDER } from '../store/reports.repo';
import { useTestStore } from '../store/testing/use-test-store';
import { composeStatus, type StatusSources } from './compose-status';
import { formatStatus } from './format-status';

describe('composeStatus', () => {
  const t = useTestStore('postgres');

  function sources(leaseHolder: StatusSources['leaseHolder'], gate = new LeaseGate()): StatusSources {
    return { store: t.store, gate, leaseHolder, tree: () => undefined, controller: 'status-test:1', now: () => new Date() };
  }

  test('says the lease key holds a value no controller wrote, rather than that nobody holds it', async () => {
    const gate = new LeaseGate();
    gate.note('the lease key holds a value no controller wrote (revision 7, 12 bytes); acting stopped until it is given back or expires');
    const status = await composeStatus(sources(async () => ({ holder: null, revision: 7 }), gate));
    expect(status.lease).toMatchObject({ state: 'standing by', holder: null, note: expect.stringContaining('a value no controller wrote') });
    expect(status.problems).toContainEqual({ kind: 'lease', subject: 'lease', detail: expect.stringContaining('the lease key holds a value no controller wrote (revision 7)') });
    expect(formatStatus(status, new Date())).toContain('a value no controller wrote');
  });

  test('shows refusals from names the store does not know under one unknown sender, never under those names', async () => {
    for (const name of ['made-up-1', 'made-up-2', 'made-up-3']) await countRefusalOf(t.store, name, 'malformed', new Date());
    const status = await composeStatus(sources(async () => null));
    expect(status.refused_reports.by_node.filter((row) => row.node.startsWith('made-up'))).toEqual([]);
    expect(status.refused_reports.by_node).toContainEqual(expect.objectContaining({ node: UNKNOWN_SENDER, reason: 'malformed', count: 3 }));
  });

  test('names the overlay\'s nodes no peer can dial, and makes two of them a problem, since no tunnel can start between them', async () => {
    await ready();
    const now = new Date();
    const nodes: Array<{ name: string; address: string; addresses: Array<{ interface: string; address: string }> | null; wireguard: string }> = [
      { name: 'o-direct', address: '10.77.9.1', addresses: [{ interface: 'eth0', address: '192.0.2.10' }], wireguard: 'kernel' },
      { name: 'o-natted-1', address: '10.77.9.2', addresses: [{ interface: 'wlan0', address: '100.64.3.4' }], wireguard: 'wireguard-go' },
      { name: 'o-natted-2', address: '10.77.9.3', addresses: [], wireguard: 'kernel' },
      { name: 'o-silent', address: '10.77.9.4', addresses: null, wireguard: 'kernel' },
      { name: 'o-bare', address: '10.77.9.5', addresses: [{ interface: 'eth0', address: '192.0.2.11' }], wireguard: 'none' },
    ];
    for (const node of nodes) {
      const identity = generateNodeIdentity();
      await upsertNode(t.store, { name: node.name, lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public }, now);
      await t.store.query('UPDATE nodes SET overlay_address = $2, inventory = $3, profile = $4 WHERE name = $1', [
        node.name, node.address, node.addresses === null ? null : JSON.stringify({ addresses: node.addresses }), JSON.stringify({ wireguard: node.wireguard }),
      ]);
    }
    const status = await composeStatus(sources(async () => null));
    expect(status.overlay).toEqual({
      unreachable: { count: 2, nodes: ['o-natted-1', 'o-natted-2'] },
      unreported: { count: 1, nodes: ['o-silent'] },
      no_wireguard: { count: 1, nodes: ['o-bare'] },
    });
    expect(status.problems).toContainEqual({ kind: 'overlay', subject: 'overlay', detail: expect.stringMatching(/^2 nodes have no address another node can dial \(o-natted-1, o-natted-2\): no tunnel can start between any two of them; .*UDP port 51820/) });
    expect(formatStatus(status, now)).toContain('overlay: 2 unreachable (o-natted-1, o-natted-2): no address another node can dial; each opens its tunnels itself; 1 unreported (o-silent): its host said no addresses yet; 1 without WireGuard (o-bare): no tunnel to or from it (docs/overlay.md)');
    // Once they are off the overlay (here: their records gone), they are no longer counted.
    await t.store.query("DELETE FROM nodes WHERE name LIKE 'o-%'");
    const after = await composeStatus(sources(async () => null));
    expect(after.overlay).toEqual({ unreachable: { count: 0, nodes: [] }, unreported: { count: 0, nodes: [] }, no_wireguard: { count: 0, nodes: [] } });
    expect(after.problems.filter((problem) => problem.kind === 'overlay')).toEqual([]);
    expect(formatStatus(after, now)).toContain('overlay: every node can be dialled by its peers');
  });

  test('tells declarations outstanding (sent, not reported) from failed (reported), and lists nodes away without calling them a problem', async () => {
    await ready();
    const now = new Date();
    const sent = (minutesAgo: number): Date => new Date(now.getTime() - minutesAgo * 60_000);
    const nodes: Array<{ name: string; kind: 'resident' | 'episodic'; state: 'enrolled' | 'disconnected'; sentGeneration: number; reported: number | null; summary: unknown; sentAgo: number; allotted?: number }> = [
      { name: 'd-north', kind: 'resident', state: 'enrolled', sentGeneration: 2, reported: 1, summary: { outcomes: { applied: 3 } }, sentAgo: 5 },
      { name: 'd-west', kind: 'episodic', state: 'disconnected', sentGeneration: 1, reported: null, summary: null, sentAgo: 90 },
      // Failed on generation 3, then sent 4: what it will make of 4 is not known yet, so it is outstanding, not failed.
      { name: 'd-retry', kind: 'resident', state: 'enrolled', sentGeneration: 4, reported: 3, summary: { outcomes: { failed: 1 } }, sentAgo: 1 },
      { name: 'd-south', kind: 'resident', state: 'enrolled', sentGeneration: 3, reported: 3, summary: { outcomes: { applied: 1, failed: 2 } }, sentAgo: 30 },
      { name: 'd-refuser', kind: 'resident', state: 'enrolled', sentGeneration: 2, reported: 2, summary: { refused: 'stale_epoch' }, sentAgo: 20 },
      { name: 'd-east', kind: 'resident', state: 'enrolled', sentGeneration: 1, reported: 1, summary: { outcomes: { applied: 4 } }, sentAgo: 60 },
      // Given generation 3, whose send never happened: nothing it was sent is waiting.
      { name: 'd-unsent', kind: 'resident', state: 'enrolled', sentGeneration: 2, reported: 2, summary: { outcomes: { applied: 1 } }, sentAgo: 10, allotted: 3 },
    ];
    for (const node of nodes) {
      const identity = generateNodeIdentity();
      await upsertNode(t.store, { name: node.name, lifecycle_state: node.state, public_key: identity.public_key, nkey: identity.nkey_public }, now);
      await t.store.query(
        `UPDATE nodes SET host_kind = $2, report_generation = $3, report_summary = $4, reported_at = $5, last_seen_at = $6, declaration_generation = $7,
                disconnected_since = CASE WHEN lifecycle_state = 'disconnected' THEN $6::timestamptz END WHERE name = $1`,
        [node.name, node.kind, node.reported, node.summary === null ? null : JSON.stringify(node.summary), node.reported === null ? null : now, sent(node.sentAgo), node.allotted ?? node.sentGeneration],
      );
      for (let generation = 1; generation <= node.sentGeneration; generation += 1) {
        await t.store.query('INSERT INTO declarations (node, generation, epoch, kind, digest, sent_at) VALUES ($1, $2, 1, $3, $4, $5)', [
          node.name, generation, generation === 1 ? 'overlay' : 'full', String(generation).repeat(64).slice(0, 64), sent(node.sentAgo + node.sentGeneration - generation),
        ]);
      }
    }

    const status = await composeStatus(sources(async () => null));
    expect(status.declarations.outstanding.count).toBe(3);
    expect(status.declarations.outstanding.nodes.map((node) => node.node)).toEqual(['d-west', 'd-north', 'd-retry']);
    expect(status.declarations.outstanding.nodes[0]).toEqual({ node: 'd-west', host_kind: 'episodic', lifecycle_state: 'disconnected', generation: 1, sent_at: sent(90).toISOString() });
    expect(status.declarations.failed.count).toBe(2);
    expect(status.declarations.failed.nodes).toEqual([
      { node: 'd-south', generation: 3, failed: 2, refused: null, reported_at: now.toISOString() },
      { node: 'd-refuser', generation: 2, failed: 0, refused: 'stale_epoch', reported_at: now.toISOString() },
    ]);
    expect(status.nodes.by_kind).toMatchObject({ episodic: 1, resident: 6 });
    expect(status.nodes.disconnected).toContainEqual({ node: 'd-west', host_kind: 'episodic', since: sent(90).toISOString() });
    expect(status.problems.filter((problem) => problem.subject === 'd-west')).toEqual([]);

    const text = formatStatus(status, now);
    expect(text).toContain('\ndeclarations outstanding (sent, not yet reported): 3: d-west (episodic, disconnected) generation 1 sent 1 h ago; d-north (resident, enrolled) generation 2 sent 5 min ago; d-retry (resident, enrolled) generation 4 sent 1 min ago\n');
    expect(text).toContain('\ndeclarations failed (reported): 2: d-south generation 3 2 resources failed; d-refuser generation 2 refused (stale_epoch)\n');
    expect(text).toMatch(/\ndisconnected: 1: d-west \(episodic\) since \S+, 1 h\n/);
  });

  describe('led by the open conditions', () => {
    const now = new Date();
    const condition = (id: string, severity: 'urgent' | 'warning', silencedFor: number | null): Condition => ({
      id, kind: id.split('.')[0] as string, signal: 'S1', subject: id.split('.')[1] as string, severity, state: 'open', detail: `${id} holds`, show: 'mesh-control conditions',
      raised_at: now.toISOString(), changed_at: now.toISOString(), cleared_at: null, count: 1, epoch: 3,
      silence: silencedFor === null ? null : { by: 'ana@desk', why: 'known', at: now.toISOString(), until: new Date(now.getTime() + silencedFor).toISOString() },
    });
    const gate = (): LeaseGate => {
      const acting = new LeaseGate();
      acting.open({ epoch: 3, revision: 3, actingUntil: performance.now() + 600_000 });
      return acting;
    };

    test('says it could not read them, as not well, rather than all well', async () => {
      const status = await composeStatus({ ...sources(async () => null, gate()), conditions: async () => {
        throw new Error('the bucket did not answer');
      } });
      expect(status.conditions).toEqual({ open: 0, urgent: 0, silenced: 0, list: [], unreadable: 'the bucket did not answer' });
      expect(status.all_well).toBe(false);
      expect(status.problems[0]).toEqual({ kind: 'conditions', subject: 'conditions', detail: 'the open conditions could not be read: the bucket did not answer' });
      const text = formatStatus(status, now);
      expect(text).toMatch(/^NOT WELL: the open conditions could not be read \(the bucket did not answer\)/);
      expect(text).not.toContain('all well');
    });

    test('puts urgent first and a silenced one after the unsilenced, and says not well while any is open', async () => {
      const status = await composeStatus({ ...sources(async () => null, gate()), conditions: async () => [condition('heartbeat-silent.b', 'warning', null), condition('call-hung.a', 'warning', 3_600_000), condition('doctor-failing.lease', 'urgent', null)] });
      expect(status.conditions?.list.map((item) => item.id)).toEqual(['doctor-failing.lease', 'heartbeat-silent.b', 'call-hung.a']);
      expect(status.conditions).toMatchObject({ open: 3, urgent: 1, silenced: 1, unreadable: null });
      expect(status.all_well).toBe(false);
      const lines = formatStatus(status, now).split('\n');
      expect(lines[0]).toBe('NOT WELL: 3 conditions open (1 urgent, 1 silenced):');
      expect(lines[1]).toMatch(/^ {2}URGENT doctor-failing\.lease: /);
      expect(lines[3]).toMatch(/^ {2}WARNING call-hung\.a: .*silenced until \S+ by ana@desk: known/);
    });

    test('with none open but a problem (a lease key no controller wrote), says not all well and points at the problems', async () => {
      const notActing = await composeStatus({ ...sources(async () => ({ holder: null, revision: 7 }), gate()), conditions: async () => [] });
      expect(notActing.problems).toContainEqual(expect.objectContaining({ kind: 'lease' }));
      expect(notActing.all_well).toBe(false);
      const text = formatStatus(notActing, now);
      expect(text).toMatch(/^no condition open, but \d+ problems? below\n/);
      expect(text).not.toContain('all well');
    });
  });
});
