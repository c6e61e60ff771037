import type { NatsConnection } from '@nats-io/transport-node';
import { eventually, useTestController, type TestMachine } from '../enrolment/testing/test-controller';

describe('three nodes on the overlay', () => {
  const t = useTestController('postgres');

  test('get three distinct addresses from the pool, and each node\'s overlay lists the other two as peers', async () => {
    const names = ['romeo', 'sierra', 'tango'];
    const machines = new Map<string, TestMachine>();
    for (const name of names) {
      const token = await t.issue();
      const machine = t.machine(name);
      machines.set(name, machine);
      expect(await t.enrol(token, t.requestFor(machine, token))).toEqual({ ok: true, node: name });
    }
    // The first node was sent its overlay, then new peers twice; the second, once more.
    // Waited for generously (a loaded machine), and then the counts last seen are what is checked,
    // so a failure shows them.
    const expected = { romeo: 3, sierra: 2, tango: 1 };
    let seen: Record<string, number> = {};
    await eventually(async () => {
      const rows = await t.ctx.store.query<{ node: string; sent: number }>("SELECT node, count(*)::int AS sent FROM declarations GROUP BY node ORDER BY node");
      seen = Object.fromEntries(rows.map((row) => [row.node, row.sent]));
      return JSON.stringify(seen) === JSON.stringify(expected) ? true : undefined;
    }, 'every node to be sent its peers', 60_000).catch(() => undefined);
    expect(seen).toEqual(expected);
    await t.settled();

    const overlays = new Map<string, NonNullable<Awaited<ReturnType<typeof t.nextDeclaration>>['declaration']['overlay']>>();
    const connections: NatsConnection[] = [];
    for (const name of names) {
      const connection = await t.connectNode(name, machines.get(name) as TestMachine);
      connections.push(connection);
      // The stream keeps only the latest declaration per node: the one with every peer.
      const { declaration } = await t.nextDeclaration(connection, name);
      expect(declaration.kind).toBe('overlay');
      overlays.set(name, declaration.overlay as NonNullable<typeof declaration.overlay>);
    }
    const addresses = names.map((name) => overlays.get(name)?.address);
    expect(new Set(addresses).size).toBe(3);
    expect(addresses).toEqual(['10.77.0.1/32', '10.77.0.2/32', '10.77.0.3/32']);

    for (const name of names) {
      const overlay = overlays.get(name);
      const others = names.filter((other) => other !== name);
      expect(overlay?.peers.map((peer) => peer.name)).toEqual(others);
      for (const peer of overlay?.peers ?? []) {
        expect(peer.public_key).toBe(machines.get(peer.name)?.wireguard_public_key);
        expect(peer.allowed_ips).toEqual([overlays.get(peer.name)?.address]);
      }
      expect(overlay?.names.map((entry) => `${entry.name}=${entry.address}`)).toEqual(['romeo=10.77.0.1', 'sierra=10.77.0.2', 'tango=10.77.0.3']);
    }
  }, 120_000);
});
