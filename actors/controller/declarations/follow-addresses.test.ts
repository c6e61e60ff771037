import type { NatsConnection } from '@nats-io/transport-node';
import type { InventoryAddress } from '../../../schema/inventory';
import { heartbeatSubject } from '../../shared/bus/subjects';
import { eventually, useTestController, type TestMachine } from '../enrolment/testing/test-controller';

// Endpoints follow the node: the addresses a host reports in its heartbeats, not the ones it
// enrolled with, decide where its peers are told to reach it.
describe('a node whose addresses change', () => {
  const t = useTestController('postgres');
  const connections = new Map<string, NatsConnection>();

  const sentTo = async (): Promise<Map<string, number>> => {
    const rows = await t.ctx.store.query<{ node: string; sent: number }>('SELECT node, count(*)::int AS sent FROM declarations GROUP BY node');
    return new Map(rows.map((row) => [row.node, row.sent]));
  };
  // Each heartbeat a millisecond after the last, by the node's clock, as a host sends them.
  let sentAt = Date.now();
  const beat = (node: string, addresses: InventoryAddress[], at = (sentAt += 1)): void => {
    connections.get(node)?.publish(heartbeatSubject(node), JSON.stringify({
      node, sent_at: new Date(at).toISOString(), version_running: '0.1.0', host_kind: 'resident',
      seconds_since_linked: 0, last_reconcile_at: null, uptime_seconds: 12, addresses,
    }));
  };
  const keptAddresses = async (node: string): Promise<InventoryAddress[] | null | undefined> =>
    (await t.ctx.store.query<{ addresses: InventoryAddress[] | null }>("SELECT inventory->'addresses' AS addresses FROM nodes WHERE name = $1", [node]))[0]?.addresses;
  const said = (addresses: InventoryAddress[] | null | undefined): string => (addresses ?? []).map((entry) => `${entry.interface}=${entry.address}`).join(' ');
  /** Waits until `node` has been sent `count` declarations in all, then reads the latest. */
  const latestOverlay = async (node: string, count: number) => {
    await eventually(async () => ((await sentTo()).get(node) === count ? true : undefined), `node ${node} to be sent declaration ${count}`);
    await t.settled();
    const { declaration } = await t.nextDeclaration(connections.get(node) as NatsConnection, node);
    return declaration.overlay;
  };

  beforeAll(async () => {
    for (const name of ['romeo', 'sierra']) {
      const token = await t.issue();
      const machine: TestMachine = t.machine(name);
      expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: name });
      connections.set(name, await t.connectNode(name, machine));
    }
    // romeo: its overlay, then sierra as a peer; sierra: its overlay. Neither reported addresses.
    await eventually(async () => {
      const sent = await sentTo();
      return sent.get('romeo') === 2 && sent.get('sierra') === 1 ? true : undefined;
    }, 'both nodes to be sent their overlay');
    const overlay = await latestOverlay('sierra', 1);
    expect(overlay?.peers.map((peer) => [peer.name, peer.endpoint])).toEqual([['romeo', undefined]]);
    await latestOverlay('romeo', 2);
  });

  afterAll(async () => {
    for (const connection of connections.values()) await connection.close();
  });

  test('its first reachable address reaches its peers, and itself (it no longer needs keepalives)', async () => {
    beat('romeo', [{ interface: 'eth0', address: '192.0.2.10' }]);
    const sierra = await latestOverlay('sierra', 2);
    expect(sierra?.peers).toEqual([expect.objectContaining({ name: 'romeo', endpoint: '192.0.2.10:51820' })]);
    const romeo = await latestOverlay('romeo', 3);
    expect(romeo?.peers).toEqual([expect.not.objectContaining({ persistent_keepalive: expect.anything() })]);
  });

  test('a changed address reaches its peers in one push, and the node itself is not sent anything', async () => {
    beat('romeo', [{ interface: 'eth0', address: '198.51.100.7' }]);
    const sierra = await latestOverlay('sierra', 3);
    expect(sierra?.peers).toEqual([expect.objectContaining({ name: 'romeo', endpoint: '198.51.100.7:51820' })]);
    expect(await keptAddresses('romeo')).toEqual([{ interface: 'eth0', address: '198.51.100.7' }]);
    expect((await sentTo()).get('romeo')).toBe(3);
  });

  test('the same addresses again, or one more that peers cannot use, are kept and push nothing', async () => {
    beat('romeo', [{ interface: 'eth0', address: '198.51.100.7' }]);
    const bridged = [{ interface: 'docker0', address: '172.17.0.1' }, { interface: 'eth0', address: '198.51.100.7' }];
    beat('romeo', bridged);
    await eventually(async () => (said(await keptAddresses('romeo')) === said(bridged) ? true : undefined), 'the new address list to be kept');
    await t.settled();
    expect(await sentTo()).toEqual(new Map([['romeo', 3], ['sierra', 3]]));
  });

  test('a heartbeat taken late does not put back the addresses a newer one replaced', async () => {
    beat('romeo', [{ interface: 'eth0', address: '203.0.113.9' }], sentAt - 60_000);
    // A newer one after it, to know the late one was taken before it.
    const now = [{ interface: 'eth0', address: '198.51.100.7' }, { interface: 'docker0', address: '172.17.0.1' }];
    beat('romeo', now);
    await eventually(async () => (said(await keptAddresses('romeo')) === said(now) ? true : undefined), 'the newest address list to be kept');
    await t.settled();
    expect((await sentTo()).get('sierra')).toBe(3);
  });
});
