import type { NatsConnection } from '@nats-io/transport-node';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { generateNodeIdentity, generateSigningKeyPair, ready } from '../../shared/crypto';
import { nkeyPublicOf } from '../../shared/crypto/nkey';
import { startTestCluster, type TestCluster } from '../../../tests/broker/test-cluster';
import { openPinnedLink, type LinkListener } from './pinned-link';
import { serverRotation } from './pinned-attempt';

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

  test('moves to the next server when the one it is on is killed -9, and on round the list', async () => {
    const pins: HostPins = { broker_url: cluster.urls[0]!, broker_urls: cluster.urls, broker_fingerprint: cluster.fingerprint, controller_public_key: generateSigningKeyPair().public_key };
    const listener = new RecordingListener();
    const link = openPinnedLink({ identity, pins, listener, backoff: { firstMs: 50, capMs: 200 }, timings: { attemptTimeoutMs: 2000 }, deadLinkMs: 2000 });
    try {
      await until(() => listener.links.length === 1, 'the first link');
      expect(listener.links[0]!.getServer()).toBe(cluster.urls[0]!.replace('tls://', ''));
      await cluster.kill('s1');
      await until(() => listener.links.length === 2, 'a link to another server');
      expect(listener.links[1]!.getServer()).toBe(cluster.urls[1]!.replace('tls://', ''));
      expect(listener.notes.some((line) => line.startsWith(`linked to ${cluster.urls[1]}`))).toBe(true);
      // s1 back, s2 killed: the link goes on round the list to s3, not back to the start.
      await cluster.start('s1');
      await cluster.kill('s2');
      await until(() => listener.links.length === 3, 'a link to the third server');
      expect(listener.links[2]!.getServer()).toBe(cluster.urls[2]!.replace('tls://', ''));
    } finally {
      await link.close();
      await cluster.start('s2');
    }
  }, 60_000);
});

describe('the order servers are tried in', () => {
  const pins = (urls?: string[], first = 'tls://a:1'): HostPins => ({ broker_url: first, ...(urls === undefined ? {} : { broker_urls: urls }), broker_fingerprint: 'a'.repeat(64), controller_public_key: 'A'.repeat(43) + '=' });

  test('stays on one server while it works, starts with the token\'s, and goes round the list as each is passed over', () => {
    const rotation = serverRotation();
    const list = ['tls://a:1', 'tls://b:1', 'tls://c:1'];
    expect(rotation.pick(pins(list, 'tls://b:1'))).toBe('tls://b:1');
    expect(rotation.pick(pins(list, 'tls://b:1'))).toBe('tls://b:1');
    rotation.passOver('tls://b:1');
    expect(rotation.pick(pins(list, 'tls://b:1'))).toBe('tls://c:1');
    rotation.passOver('tls://c:1');
    expect(rotation.pick(pins(list, 'tls://b:1'))).toBe('tls://a:1');
  });

  test('ignores passing over a server it has already left, so a late close does not skip one', () => {
    const rotation = serverRotation();
    const list = ['tls://a:1', 'tls://b:1', 'tls://c:1'];
    rotation.pick(pins(list));
    rotation.passOver('tls://a:1');
    rotation.passOver('tls://a:1');
    expect(rotation.pick(pins(list))).toBe('tls://b:1');
  });

  test('keeps to the one address of a one-server mesh, and moves off a server a declaration removed', () => {
    const single = serverRotation();
    single.pick(pins());
    single.passOver('tls://a:1');
    expect(single.pick(pins())).toBe('tls://a:1');
    const rotation = serverRotation();
    rotation.pick(pins(['tls://a:1', 'tls://b:1']));
    expect(rotation.pick(pins(['tls://b:1', 'tls://c:1'], 'tls://b:1'))).toBe('tls://b:1');
  });
});
