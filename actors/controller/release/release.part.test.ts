import { jetstreamManager } from '@nats-io/jetstream';
import { DECLARATION_STREAM, declarationConsumer } from '../../shared/bus/subjects';
import { nkeySeedOf } from '../../shared/crypto';
import { eventually, useTestController, type ReadDeclaration, type TestMachine } from '../enrolment/testing/test-controller';
import { listNodeRecords } from '../nodes/list-nodes';
import { getNode } from '../store/nodes.repo';
import type { ReleaseOutcome } from './release-node';

describe('releasing a node (node.release)', () => {
  const t = useTestController('postgres');

  const enrolled = async (name: string): Promise<{ machine: TestMachine; full: ReadDeclaration }> => {
    const token = await t.issue();
    const machine = t.machine(name);
    await t.enrol(token, t.requestFor(machine, token));
    const connection = await t.connectNode(name, machine);
    const overlay = await t.nextDeclaration(connection, name);
    await t.report(connection, overlay, { sequence: 1, report_sequence: 1 });
    const full = await t.nextDeclaration(connection, name);
    await t.report(connection, full, { sequence: 2, report_sequence: 2 });
    await connection.close();
    return { machine, full };
  };
  const release = async (name: string): Promise<ReleaseOutcome> => (await t.verbs.call(t.ctx, 'node.release', { node: name })).result as ReleaseOutcome;

  test('sends a final declaration naming nothing; on its clean report the node\'s user is removed and its connection dropped', async () => {
    const { machine, full } = await enrolled('whiskey');
    const { machine: peer } = await enrolled('xray');
    const connection = await t.connectNode('whiskey', machine, { reconnect: false });

    const outcome = await release('whiskey');
    expect(outcome).toMatchObject({ node: 'whiskey', released: false });
    const final = await t.nextDeclaration(connection, 'whiskey');
    expect(final.declaration).toMatchObject({ kind: 'final', resources: [], generation: outcome.generation });
    expect(final.declaration.generation).toBeGreaterThan(full.declaration.generation);
    expect(final.declaration.overlay).toBeUndefined();
    expect((await getNode(t.ctx.store, 'whiskey'))?.lifecycle_state).toBe('enrolled');

    const dropped = connection.closed();
    await t.report(connection, final, { sequence: 3, report_sequence: 3 });
    await dropped;
    expect(connection.isClosed()).toBe(true);

    // The broker goes first, then the record.
    const record = await eventually(async () => {
      const found = await getNode(t.ctx.store, 'whiskey');
      return found?.lifecycle_state === 'released' ? found : undefined;
    }, 'the record to say released');
    expect(record).toMatchObject({ public_key: null, nkey: null });
    const listed = (await listNodeRecords(t.ctx.store, t.ctx.now())).find((node) => node.name === 'whiskey');
    expect(listed).toMatchObject({ lifecycle_state: 'released', address: null });
    await expect(t.broker.connectAsNode('whiskey', nkeySeedOf(machine.identity.secret_key), { reconnect: false })).rejects.toThrow(/Authorization/i);
    const manager = await jetstreamManager(t.ctx.nc);
    await expect(manager.consumers.info(DECLARATION_STREAM, declarationConsumer('whiskey'))).rejects.toThrow(/consumer not found/i);

    // The node left the overlay: the peer is sent an overlay without it.
    await t.settled();
    const peerConnection = await t.connectNode('xray', peer);
    const latest = await t.nextDeclaration(peerConnection, 'xray');
    expect(latest.declaration.overlay?.peers.map((p) => p.name)).not.toContain('whiskey');
    expect(latest.declaration.overlay?.names.map((entry) => entry.name)).toEqual(['xray']);
  });

  test('a final declaration that left something behind holds the release, and says what', async () => {
    const { machine } = await enrolled('yankee');
    const connection = await t.connectNode('yankee', machine);
    await release('yankee');
    const final = await t.nextDeclaration(connection, 'yankee');
    const report = {
      node: 'yankee', epoch: final.declaration.epoch, sequence: 3, report_sequence: 3, declaration_digest: final.digest,
      generation: final.declaration.generation, results: [{ key: 'file:/etc/motd', shape: 'file', outcome: 'failed', detail: 'a directory is there now' }],
      owned: { resources: [] }, version_running: '0.1.0', seconds_since_linked: 0, sent_at: new Date().toISOString(),
    };
    connection.publish('mesh.node.yankee.report', JSON.stringify(report));
    const held = await eventually(async () => (await t.ctx.store.query<{ release_held: string | null }>('SELECT release_held FROM nodes WHERE name = $1', ['yankee']))[0]?.release_held ?? undefined, 'the release to be held');
    expect(held).toContain('file:/etc/motd');
    expect((await getNode(t.ctx.store, 'yankee'))?.lifecycle_state).toBe('enrolled');
    expect(connection.isClosed()).toBe(false);
  });

  test('a node whose identity was revoked is released at once', async () => {
    await enrolled('zulu');
    await t.issue({ forNode: 'zulu' });
    expect((await getNode(t.ctx.store, 'zulu'))?.lifecycle_state).toBe('revoked');
    expect(await release('zulu')).toEqual({ node: 'zulu', generation: null, released: true, seats_left_without_holder: [] });
    expect((await getNode(t.ctx.store, 'zulu'))?.lifecycle_state).toBe('released');
  });

  test('refuses to release a node already released', async () => {
    await expect(release('zulu')).rejects.toThrow(/released, not enrolled/);
  });
});
