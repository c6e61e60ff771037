import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import type { HostIdentity, HostPins } from '../../../schema/host-state';
import { makeTestCertificate } from '../../shared/bus/test-certificates';
import { certificateFingerprint, generateNodeIdentity, generateSigningKeyPair, ready } from '../../shared/crypto';
import { startCapturingTlsServer } from '../../shared/testing/capturing-tls-server';
import { startFreezeProxy, type FreezeProxy } from '../../shared/testing/freeze-proxy';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
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
    const link = openPinnedLink({ identity, pins: pinsFor(`tls://127.0.0.1:${port}`, 'a'.repeat(64)), listener, backoff: quick, timings: { attemptTimeoutMs: 1000 } });
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
    const link = openPinnedLink({ identity, pins: pinsFor(server.url, certificateFingerprint(genuine.certPem)), listener, backoff: quick, timings: { attemptTimeoutMs: 1000 } });
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
      const link = openPinnedLink({ identity, pins: pinsFor(broker.url, broker.fingerprint), listener, backoff: quick });
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

describe('the pinned link through a network that freezes', () => {
  let broker: TestBroker;
  let proxy: FreezeProxy;
  beforeAll(async () => {
    broker = await startTestBroker({ dirPrefix: 'pinned-link freeze test-broker' });
    await broker.addNodeUser(identity.node, identity.nkey_public);
  });
  afterAll(async () => {
    await broker?.stop();
  });
  beforeEach(async () => {
    proxy = await startFreezeProxy({ port: broker.port });
  });
  afterEach(async () => {
    await proxy.close();
  });

  const open = (listener: RecordingListener, deadLinkMs = 60_000) =>
    openPinnedLink({ identity, pins: pinsFor(proxy.url, broker.fingerprint), listener, deadLinkMs });

  test('a rouse on a link that answers costs one ping: the same connection stays and no other is made', async () => {
    const listener = new RecordingListener();
    const link = open(listener);
    try {
      await until(() => listener.links.length === 1, 'the link');
      const connection = link.current();
      expect(link.rouse()).toBe('checking that the link still answers');
      await until(() => link.phase() === 'linked', 'the check');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(link.current()).toBe(connection);
      expect(listener.notes.filter((note) => /^the link answered in \d+ ms; it stays$/.test(note))).toHaveLength(1);
      // The attempt's certificate probe and the connection: nothing since.
      expect(proxy.connections()).toHaveLength(2);
      expect(listener.links).toHaveLength(1);
    } finally {
      await link.close();
    }
  });

  test('a frozen link that nobody rouses is found dead within the dead-link time, and a new one links', async () => {
    const listener = new RecordingListener();
    const link = open(listener, 1_500);
    try {
      await until(() => listener.links.length === 1, 'the link');
      proxy.freeze();
      // Well within the broker's own two-minute timeout, which would be noticed as a close.
      await until(() => listener.unlinks === 1, 'the dead link to be noticed');
      // Noticed by the pings the dead-link time sets, not by the broker closing the
      // connection. How soon is measured in bench/link, not here: a loaded machine delays timers.
      expect(listener.notes).toContain('the connection to the broker closed: the broker stopped answering pings; connecting again');
      await until(() => listener.links.length === 2, 'a new link');
      expect(listener.links[1]?.again).toBe(true);
      expect(link.current()).toBe(listener.links[1]?.connection);
    } finally {
      await link.close();
    }
  });

  test('a link the broker closes is linked again after the first step of the backoff', async () => {
    const listener = new RecordingListener();
    const link = open(listener);
    try {
      await until(() => listener.links.length === 1, 'the link');
      // The attempt's certificate probe and its connection.
      expect(proxy.connections()).toHaveLength(2);
      proxy.cut();
      await until(() => listener.links.length === 2, 'a new link');
      // One attempt after the cut (its probe and its connection), the one the first step of
      // the backoff leads to: none failed before it, so no later, longer step was waited out.
      expect(proxy.connections()).toHaveLength(4);
      expect(listener.notes).toContain('the connection to the broker closed: the broker closed the connection; connecting again');
    } finally {
      await link.close();
    }
  });
});
