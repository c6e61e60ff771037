import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestBroker, type TestBroker } from '../../../tests/broker/test-broker';
import { probeBrokerTls } from './broker-tls-probe';
import { generateTlsMaterial } from './tls-material';

/** A server on 127.0.0.1 that greets every connection with `greeting` and then waits. */
async function greeter(greeting: string): Promise<{ port: number; hungUp: Promise<void>; close(): void }> {
  const sockets = new Set<net.Socket>();
  let hangUp: () => void = () => undefined;
  const hungUp = new Promise<void>((resolve) => (hangUp = resolve));
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => hangUp());
    socket.write(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Settles when a client has closed its connection. */
    hungUp,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('probeBrokerTls', () => {
  let broker: TestBroker;
  let dir: string;

  beforeAll(async () => {
    broker = await startTestBroker();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh probe-'));
  });

  afterAll(async () => {
    await broker?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('passes for a broker that requires TLS and presents the expected certificate', async () => {
    await expect(probeBrokerTls({ host: '127.0.0.1', port: broker.port, caPem: broker.caPem })).resolves.toBeUndefined();
  });

  test('fails for a broker presenting another certificate', async () => {
    const other = await generateTlsMaterial({ keyFile: path.join(dir, 'k'), certFile: path.join(dir, 'c'), subjectAltNames: ['127.0.0.1'] });
    await expect(probeBrokerTls({ host: '127.0.0.1', port: broker.port, caPem: other.certPem })).rejects.toThrow(/certificate/i);
  });

  test('fails for a server that does not require TLS', async () => {
    const plain = await greeter('INFO {"server_id":"x","tls_required":false}\r\n');
    try {
      await expect(probeBrokerTls({ host: '127.0.0.1', port: plain.port, caPem: broker.caPem })).rejects.toThrow('the broker does not require TLS');
    } finally {
      plain.close();
    }
  });

  test('fails for a server that is not a NATS server, and for one that says nothing in time', async () => {
    const web = await greeter('HTTP/1.1 400 Bad Request\r\n');
    const mute = await greeter('');
    try {
      await expect(probeBrokerTls({ host: '127.0.0.1', port: web.port, caPem: broker.caPem })).rejects.toThrow(/first line is not INFO/);
      await expect(probeBrokerTls({ host: '127.0.0.1', port: mute.port, caPem: broker.caPem, timeoutMs: 100 })).rejects.toThrow(/within 100 ms/);
    } finally {
      web.close();
      mute.close();
    }
  });

  test('an abandoned probe rejects at once and closes its connection', async () => {
    const mute = await greeter('');
    const abandon = new AbortController();
    try {
      const probe = probeBrokerTls({ host: '127.0.0.1', port: mute.port, caPem: broker.caPem, timeoutMs: 10_000, signal: abandon.signal });
      await new Promise((resolve) => setTimeout(resolve, 50));
      abandon.abort();
      await expect(probe).rejects.toThrow('abandoned');
      await expect(mute.hungUp).resolves.toBeUndefined();
    } finally {
      mute.close();
    }
  });
});
