import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { startTestCluster, type TestCluster } from '../../../tests/broker/test-cluster';
import { DECLARATION_STREAM, declarationSubject } from '../../shared/bus/subjects';
import { addNodeConsumer } from '../declarations/declaration-stream';
import { ensureDeclarationStream } from '../serve/ensure-declaration-stream';
import { ensureKvBucket } from '../serve/ensure-kv-bucket';
import { clusterServerConfig, parseClusterServer, writeBrokerCluster } from './broker-cluster';
import { renderBrokerConfig } from './broker-config';
import { BrokerConfigInvalid } from './broker-errors';
import { brokerPaths } from './broker-paths';
import { startBroker } from './broker-process';
import { generateTlsMaterial } from './tls-material';
import { connectPinned } from '../../shared/bus/connect-pinned';
import { freePort } from '../../shared/testing/free-port';

describe('a broker cluster as mesh-control broker cluster writes it', () => {
  let cluster: TestCluster;
  let nc: NatsConnection;

  beforeAll(async () => {
    cluster = await startTestCluster();
    nc = await cluster.connectAsController();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('forms one cluster over TLS routes on Debian\'s nats-server, every server a JetStream peer', async () => {
    await ensureDeclarationStream(nc, 3);
    const info = await (await jetstreamManager(nc)).streams.info(DECLARATION_STREAM);
    expect(info.config.num_replicas).toBe(3);
    const peers = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((replica) => replica.name)].sort();
    expect(peers).toEqual(['s1', 's2', 's3']);
  }, 30_000);

  it('keeps each node\'s consumer on as many servers as the stream', async () => {
    const manager = await jetstreamManager(nc);
    await addNodeConsumer(manager, 'web-1', DeliverPolicy.All);
    const consumer = await manager.consumers.info(DECLARATION_STREAM, 'node-web-1');
    expect(1 + (consumer.cluster?.replicas?.length ?? 0)).toBe(3);
  }, 30_000);

  it('makes a KV bucket with the replicas asked, and raises one made with fewer', async () => {
    const made = await ensureKvBucket(nc, 'test_raised', { ttlMs: 0, maxValueBytes: 1024, timeoutMs: 5000, replicas: 1 });
    expect((await made.jsm.streams.info(made.stream)).config.num_replicas).toBe(1);
    const raised = await ensureKvBucket(nc, 'test_raised', { ttlMs: 0, maxValueBytes: 1024, timeoutMs: 5000, replicas: 3 });
    expect((await raised.jsm.streams.info(raised.stream)).config.num_replicas).toBe(3);
  }, 30_000);

  it('gives both of two controllers starting together the bucket they both make (2.9 leaves one create unanswered, or says not found)', async () => {
    const other = await cluster.connectAsController('second controller');
    for (const name of ['together_1', 'together_2', 'together_3']) {
      const settings = { ttlMs: 15_000, maxValueBytes: 1024, timeoutMs: 2000, replicas: 3 };
      const both = await Promise.allSettled([ensureKvBucket(nc, name, settings), ensureKvBucket(other, name, settings)]);
      expect(both.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'made'))).toEqual(['made', 'made']);
    }
  }, 90_000);

  it('keeps a bucket and the declarations writable and whole when the server the client is on is killed -9', async () => {
    const { kv } = await ensureKvBucket(nc, 'test_lease', { ttlMs: 15_000, maxValueBytes: 1024, timeoutMs: 5000, replicas: 3 });
    const first = await kv.create('holder', 'one');
    await jetstream(nc).publish(declarationSubject('web-1'), 'declaration 1');
    const on = cluster.servers.find((server) => nc.getServer().endsWith(`:${server.config.listen.port}`));
    expect(on).toBeDefined();
    await cluster.kill(on!.name);
    // The client moves to another server by itself; the bucket's leader is elected again.
    const second = await retry(() => kv.update('holder', 'two', first));
    expect(second).toBeGreaterThan(first);
    expect((await retry(() => jetstreamManager(nc).then((m) => m.streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject('web-1') }))))?.string()).toBe('declaration 1');
    await cluster.start(on!.name);
    // Back, it catches up: the value written while it was down is there when asked of it alone.
    const alone = await connectTo(cluster, on!.name);
    const { kv: seen } = await ensureKvBucket(alone, 'test_lease', { ttlMs: 15_000, maxValueBytes: 1024, timeoutMs: 5000, replicas: 3 });
    expect((await retry(async () => {
      const entry = await seen.get('holder');
      if (entry?.string() !== 'two') throw new Error('not caught up yet');
      return entry;
    }))?.revision).toBe(second);
    await alone.close();
  }, 90_000);

  it('refuses a route from a server whose route certificate is not in the bundle', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh intruder '));
    try {
      const paths = brokerPaths(dir);
      await generateTlsMaterial({ keyFile: paths.keyFile, certFile: paths.certFile, subjectAltNames: ['127.0.0.1'] });
      await fs.writeFile(paths.authFile, 'accounts { MESH { jetstream: enabled, users: [] } }\n');
      const target = cluster.servers[0]!.config.cluster!.listen.port;
      const own = { name: 'intruder', client: { host: '127.0.0.1', port: await freePort() }, route: { host: '127.0.0.1', port: await freePort() } };
      const other = { name: 'target', client: { host: '127.0.0.1', port: 1 }, route: { host: '127.0.0.1', port: target } };
      // Its own bundle trusts itself and routes to the real cluster's first server.
      const written = await writeBrokerCluster(dir, [own, other]);
      const config = clusterServerConfig(dir, 'mesh', own, [`tls://127.0.0.1:${target}`]);
      const firstLog = cluster.servers[0]!.config.logFile;
      const before = (await fs.readFile(firstLog, 'utf8')).length;
      const intruder = await startBroker({ configFile: written.configFiles.intruder!, config });
      try {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        // Its dial to the cluster's first server never became a route (it routes to itself only,
        // which nats-server drops as a duplicate), and that server says why.
        expect(await fs.readFile(config.logFile, 'utf8')).not.toMatch(new RegExp(`127\\.0\\.0\\.1:${target} - rid:\\d+ - Route connection created`));
        expect((await fs.readFile(firstLog, 'utf8')).slice(before)).toMatch(/handshake/i);
        const manager = await jetstreamManager(nc);
        const info = await manager.streams.info(DECLARATION_STREAM);
        expect([info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((replica) => replica.name)]).not.toContain('intruder');
      } finally {
        await intruder.stop();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('cluster configuration', () => {
  it('reads a server as NAME=HOST:CLIENT_PORT:ROUTE_PORT, IPv6 in brackets', () => {
    expect(parseClusterServer('m1=10.0.0.1:4222:6222')).toEqual({ name: 'm1', client: { host: '10.0.0.1', port: 4222 }, route: { host: '10.0.0.1', port: 6222 } });
    expect(parseClusterServer('m2=[fd00::2]:4222:6222').client.host).toBe('fd00::2');
  });

  it.each(['m1=10.0.0.1:4222', 'm 1=10.0.0.1:4222:6222', 'm1=10.0.0.1:4222:70000', '=10.0.0.1:1:2', 'm1=[nothex]:1:2'])('refuses %s, naming the shape', (text) => {
    expect(() => parseClusterServer(text)).toThrow(BrokerConfigInvalid);
    expect(() => parseClusterServer(text)).toThrow(/NAME=HOST:CLIENT_PORT:ROUTE_PORT/);
  });

  it('refuses a cluster of one, a name given twice, a server whose client and route ports are one, and every-address', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh cluster-config '));
    try {
      const a = parseClusterServer('a=127.0.0.1:4222:6222');
      await expect(writeBrokerCluster(dir, [a])).rejects.toThrow(/2 to 5 servers/);
      await expect(writeBrokerCluster(dir, [a, { ...a, client: { host: '127.0.0.1', port: 4223 }, route: { host: '127.0.0.1', port: 6223 } }])).rejects.toThrow(/twice/);
      await expect(writeBrokerCluster(dir, [a, parseClusterServer('b=127.0.0.1:6300:6300')])).rejects.toThrow(/client and route ports are the same/);
      await expect(writeBrokerCluster(dir, [a, parseClusterServer('b=0.0.0.0:4223:6223')])).rejects.toThrow(/the address the others reach it at/);
      await expect(fs.readdir(dir)).resolves.toEqual([]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('writes no cluster block for one server, so its configuration stays as it was', () => {
    const text = renderBrokerConfig({
      serverName: 'mesh-broker', listen: { host: '127.0.0.1', port: 4222 },
      tls: { certFile: '/m/tls/broker.crt', keyFile: '/m/tls/broker.key', timeoutSeconds: 5 },
      jetstream: { storeDir: '/m/jetstream', maxMemoryStore: 1, maxFileStore: 1 }, pidFile: '/m/pid', logFile: '/m/log', authInclude: 'auth.conf',
    });
    expect(text).not.toMatch(/cluster|routes/);
  });
});

async function connectTo(cluster: TestCluster, name: string): Promise<NatsConnection> {
  const server = cluster.servers.find((each) => each.name === name)!;
  return connectPinned(server.url, cluster.fingerprint, { authenticator: nkeyAuthenticator(cluster.controllerSeed), reconnect: false, timeout: 5000 });
}

async function retry<T>(work: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
