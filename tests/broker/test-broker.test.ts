import { promises as fs } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { certificateFingerprint } from '../../actors/shared/crypto';
import { startTestBroker, type TestBroker } from './test-broker';

describe('startTestBroker', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  test('serves TLS on 127.0.0.1 with the certificate its fingerprint names, from a directory whose name has a space', async () => {
    expect(broker.url).toBe(`tls://127.0.0.1:${broker.port}`);
    expect(broker.dir).toContain(' ');
    expect(broker.fingerprint).toBe(certificateFingerprint(broker.certPem));
    expect(broker.caPem).toBe(broker.certPem);
    const connection = await broker.connectAsController();
    expect(connection.info?.tls_required).toBe(true);
  });

  test('lets the controller use JetStream: a KV bucket takes a value and gives it back', async () => {
    const connection = await broker.connectAsController();
    const kv = await new Kvm(connection).create('test_broker_kv');
    const revision = await kv.put('holder', 'controller-1');
    const entry = await kv.get('holder');
    expect(entry?.string()).toBe('controller-1');
    expect(entry?.revision).toBe(revision);
  });

  test('refuses a client without credentials', async () => {
    await expect(connect({ servers: broker.url, tls: { ca: broker.caPem }, reconnect: false })).rejects.toMatchObject({ name: 'AuthorizationError' });
  });

  test('refuses a client that does not trust its certificate', async () => {
    await expect(connect({ servers: broker.url, reconnect: false })).rejects.toThrow(/certificate/i);
  });
});

describe('TestBroker.stop', () => {
  test('closes its connections, ends the server and removes its directory', async () => {
    const broker = await startTestBroker();
    const connection = await broker.connectAsController();
    const pid = broker.broker.pid;
    await broker.stop();
    expect(connection.isClosed()).toBe(true);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    await expect(fs.access(broker.dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
