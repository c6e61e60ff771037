import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { makeTestCertificate } from '../../shared/bus/test-certificates';
import { certificateFingerprint, generateNodeIdentity, generateSigningKeyPair, ready } from '../../shared/crypto';
import { startCapturingTlsServer } from '../../shared/testing/capturing-tls-server';
import { startTestBroker } from '../../shared/testing/test-broker';
import { openPinnedLink, type LinkListener } from './pinned-link';

// A listener that records what the link told it.
class RecordingListener implements LinkListener {
  readonly notes: string[] = [];
  readonly links: Array<{ connection: NatsConnection; again: boolean }> = [];
  unlinks = 0;
  linked(connection: NatsConnection, again: boolean): void {
    this.links.push({ connection, again });
  }
  unlinked(): void {
    this.unlinks += 1;
  }
  note(line: string): void {
    this.notes.push(line);
  }
}

const quick = { firstMs: 20, capMs: 50 };
let identity: HostIdentity;

beforeAll(async () => {
  await ready();
  identity = { node: 'linked', ...generateNodeIdentity() };
});

const pinsFor = (url: string, fingerprint: string): HostPins => ({ broker_url: url, broker_fingerprint: fingerprint, controller_public_key: generateSigningKeyPair().public_key });

async function until(look: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!look()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the pinned link', () => {
  test('keeps trying a broker it cannot reach, says so once rather than at every attempt, and stops when closed', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as AddressInfo;
        server.close(() => resolve(free));
      });
    });
    const listener = new RecordingListener();
    const link = openPinnedLink({ identity, pins: pinsFor(`tls://127.0.0.1:${port}`, 'a'.repeat(64)), listener, retry: quick, timeoutMs: 1000 });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await link.close();
    expect(listener.notes).toHaveLength(1);
    expect(listener.notes[0]).toMatch(/^cannot reach the broker: the broker could not be reached \(.*\).*; trying again/);
    expect(listener.links).toEqual([]);
    expect(link.current()).toBeNull();
  });

  test('never sends anything to a broker whose certificate is not the pinned one', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pinned-link-'));
    const genuine = makeTestCertificate(dir, 'genuine');
    const impostor = makeTestCertificate(dir, 'impostor');
    const server = await startCapturingTlsServer({ certificates: [impostor] });
    const listener = new RecordingListener();
    const link = openPinnedLink({ identity, pins: pinsFor(server.url, certificateFingerprint(genuine.certPem)), listener, retry: quick, timeoutMs: 1000 });
    try {
      await until(() => server.connections.length >= 2, 'a second attempt');
      await link.close();
      await server.settled();
      expect(listener.notes[0]).toContain('does not match the pinned fingerprint');
      expect(server.everythingReceived()).toBe('');
      expect(listener.links).toEqual([]);
    } finally {
      await server.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('links to a real broker as the node\'s own nkey user, and drains when closed', async () => {
    const broker = await startTestBroker({ dirPrefix: 'pinned-link test-broker' });
    try {
      await broker.addNodeUser(identity.node, identity.nkey_public);
      const listener = new RecordingListener();
      const link = openPinnedLink({ identity, pins: pinsFor(broker.url, broker.fingerprint), listener, retry: quick });
      await until(() => listener.links.length === 1, 'the link');
      expect(listener.links[0]?.again).toBe(false);
      expect(listener.notes).toEqual([`linked to ${broker.url} as node ${identity.node}`]);
      const connection = link.current();
      expect(connection).not.toBeNull();
      // Connected as that node: it may publish under its own subjects.
      connection!.publish(`mesh.node.${identity.node}.heartbeat`, 'here');
      await connection!.flush();
      await link.close();
      expect(connection!.isClosed()).toBe(true);
      expect(listener.unlinks).toBe(1);
    } finally {
      await broker.stop();
    }
  });
});
