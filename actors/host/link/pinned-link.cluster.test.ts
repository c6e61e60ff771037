import type { NatsConnection } from '@nats-io/transport-node';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { generateNodeIdentity, generateSigningKeyPair, ready } from '../../shared/crypto';
import { nkeyPublicOf } from '../../shared/crypto/nkey';
import { startTestCluster, type TestCluster } from '../../../tests/broker/test-cluster';
import { openPinnedLink, type LinkListener } from './pinned-link';
import { serverRotation, startingServer } from './pinned-attempt';

// A listener that records what the link told it.
class RecordingListener implements LinkListener {
  readonly notes: string[] = [];
  readonly links: NatsConnection[] = [];
  linked(connection: NatsConnection): void {
    this.links.push(connection);
  }
  unlinked(): void {}
  note(line: string): void {
    this.notes.push(line);
  }
}

async function until(look: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!look()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the pinned link on a cluster', () => {
  let cluster: TestCluster;
  let identity: HostIdentity;

  beforeAll(async () => {
    await ready();
    identity = { node: 'roamer', ...generateNodeIdentity() };
    cluster = await startTestCluster();
    await cluster.setUsers([{ role: 'controller', nkey: cluster.controllerNkey }, { role: 'node', node: 'roamer', nkey: nkeyPublicOf(identity.public_key) }]);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  test('starts on the server its name falls on, moves to the next when that one is killed -9, and on round the list', async () => {
    const pins: HostPins = { broker_url: cluster.urls[0]!, broker_urls: cluster.urls, broker_fingerprint: cluster.fingerprint, controller_public_key: generateSigningKeyPair().public_key };
    const first = cluster.urls.indexOf(startingServer('roamer', cluster.urls));
    const nth = (step: number) => cluster.urls[(first + step) % cluster.urls.length]!;
    const name = (url: string) => `s${cluster.urls.indexOf(url) + 1}`;
    const listener = new RecordingListener();
    const link = openPinnedLink({ identity, pins, listener, backoff: { firstMs: 50, capMs: 200 }, timings: { attemptTimeoutMs: 2000 }, deadLinkMs: 2000 });
    try {
      await until(() => listener.links.length === 1, 'the first link');
      expect(listener.links[0]!.getServer()).toBe(nth(0).replace('tls://', ''));
      await cluster.kill(name(nth(0)));
      await until(() => listener.links.length === 2, 'a link to another server');
      expect(listener.links[1]!.getServer()).toBe(nth(1).replace('tls://', ''));
      expect(listener.notes.some((line) => line.startsWith(`linked to ${nth(1)}`))).toBe(true);
      // The first back, the second killed: the link goes on round the list to the third, not
      // back to where it started.
      await cluster.start(name(nth(0)));
      await cluster.kill(name(nth(1)));
      await until(() => listener.links.length === 3, 'a link to the third server');
      expect(listener.links[2]!.getServer()).toBe(nth(2).replace('tls://', ''));
    } finally {
      await link.close();
      await cluster.start(name(nth(1)));
    }
  }, 60_000);
});

describe('the order servers are tried in', () => {
  const pins = (urls?: string[], first = 'tls://a:1'): HostPins => ({ broker_url: first, ...(urls === undefined ? {} : { broker_urls: urls }), broker_fingerprint: 'a'.repeat(64), controller_public_key: 'A'.repeat(43) + '=' });
  const list = ['tls://a:1', 'tls://b:1', 'tls://c:1'];

  test('starts on the server its name falls on, stays there while it works, and goes round the list as each is passed over', () => {
    const start = list.indexOf(startingServer('web-01', list));
    const rotation = serverRotation('web-01');
    expect(rotation.pick(pins(list))).toBe(list[start]);
    expect(rotation.pick(pins(list))).toBe(list[start]);
    rotation.passOver(list[start]!);
    expect(rotation.pick(pins(list))).toBe(list[(start + 1) % 3]);
    rotation.passOver(list[(start + 1) % 3]!);
    expect(rotation.pick(pins(list))).toBe(list[(start + 2) % 3]);
  });

  test('spreads a fleet over the servers, each node always on the same one first', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i += 1) {
      const server = startingServer(`node-${i}`, list);
      expect(startingServer(`node-${i}`, list)).toBe(server);
      counts.set(server, (counts.get(server) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(list);
    for (const count of counts.values()) expect(Math.abs(count - 1000)).toBeLessThan(100);
  });

  test('ignores passing over a server it has already left, so a late close does not skip one', () => {
    const start = list.indexOf(startingServer('web-02', list));
    const rotation = serverRotation('web-02');
    rotation.pick(pins(list));
    rotation.passOver(list[start]!);
    rotation.passOver(list[start]!);
    expect(rotation.pick(pins(list))).toBe(list[(start + 1) % 3]);
  });

  test('keeps to the one address of a one-server mesh, and moves off a server a declaration removed', () => {
    const single = serverRotation('web-03');
    single.pick(pins());
    single.passOver('tls://a:1');
    expect(single.pick(pins())).toBe('tls://a:1');
    const rotation = serverRotation('web-03');
    const before = rotation.pick(pins(['tls://a:1', 'tls://b:1']));
    const after = ['tls://c:1', 'tls://d:1'];
    expect(after).not.toContain(before);
    expect(rotation.pick(pins(after, 'tls://c:1'))).toBe(startingServer('web-03', after));
  });
});
