import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { certificateFingerprint } from '../crypto';
import { startCapturingTlsServer, type CapturingTlsServer } from '../testing/capturing-tls-server';
import { BrokerNotNats, BrokerUnreachable, BrokerWithoutTls } from './bus-errors';
import { makeTestCertificate, type TestCertificate } from './test-certificates';
import { probeBrokerCertificate } from './tls-probe';

let dir: string;
let broker: TestCertificate;
let capturing: CapturingTlsServer;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-probe-'));
  broker = makeTestCertificate(dir, 'broker', { commonName: 'mesh.example' });
  capturing = await startCapturingTlsServer({ certificates: [broker] });
});
afterAll(async () => {
  await capturing.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/**
 * A plain TCP server that greets each client with `greeting` (or says nothing) and then keeps
 * the connection open, or hangs up when `hangUp` is set.
 */
async function plainServer(greeting: string | undefined, hangUp = false): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (greeting !== undefined) socket.write(greeting);
    if (hangUp) socket.destroySoon();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `tls://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('probing a broker for its certificate', () => {
  it("reads the broker's certificate: its fingerprint, PEM, subject and validity", async () => {
    const certificate = await probeBrokerCertificate(capturing.url, { timeoutMs: 2000 });
    expect(certificate.fingerprint).toBe(certificateFingerprint(broker.certPem));
    expect(certificateFingerprint(certificate.certPem)).toBe(certificate.fingerprint);
    expect(certificate.subject).toBe('CN=mesh.example');
    expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(Date.now());
    expect(new Date(certificate.validFrom).getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('completes the TLS handshake and then sends the broker nothing at all', async () => {
    const before = capturing.connections.length;
    await probeBrokerCertificate(capturing.url, { timeoutMs: 2000 });
    await capturing.settled();
    const probe = capturing.connections[before];
    expect(probe?.handshakeCompleted).toBe(true);
    expect(probe?.received.length).toBe(0);
    expect(probe?.plaintext.length).toBe(0);
  });

  it('says the broker is unreachable, at once, when nothing listens at the address', async () => {
    const url = `tls://127.0.0.1:${await closedPort()}`;
    const started = performance.now();
    const error = await probeBrokerCertificate(url, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokerUnreachable);
    expect((error as BrokerUnreachable).retryable).toBe(true);
    expect((error as BrokerUnreachable).reason).toBe('connection refused');
    expect((error as BrokerUnreachable).message).toContain(url);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('gives up on a server that never greets once the timeout has passed', async () => {
    const silent = await plainServer(undefined);
    try {
      const started = performance.now();
      const error = await probeBrokerCertificate(silent.url, { timeoutMs: 200 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerUnreachable);
      expect((error as BrokerUnreachable).reason).toBe('no answer within 200 ms');
      expect(performance.now() - started).toBeLessThan(1500);
    } finally {
      await silent.close();
    }
  });

  it('stops when the caller calls the attempt off', async () => {
    const silent = await plainServer(undefined);
    try {
      const controller = new AbortController();
      const probing = probeBrokerCertificate(silent.url, { timeoutMs: 10_000, signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const error = await probing.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerUnreachable);
      expect((error as BrokerUnreachable).reason).toBe('the attempt was called off');
    } finally {
      await silent.close();
    }
  });

  it('does not dial at all when the attempt was called off before it began', async () => {
    const before = capturing.connections.length;
    const controller = new AbortController();
    controller.abort();
    await expect(probeBrokerCertificate(capturing.url, { signal: controller.signal })).rejects.toBeInstanceOf(BrokerUnreachable);
    expect(capturing.connections.length).toBe(before);
  });

  it('refuses a server that does not greet like NATS, quoting what it said', async () => {
    const web = await plainServer('HTTP/1.1 400 Bad Request\r\n\r\n');
    try {
      const error = await probeBrokerCertificate(web.url, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerNotNats);
      expect((error as BrokerNotNats).value).toBe('HTTP/1.1 400 Bad Request');
    } finally {
      await web.close();
    }
  });

  it('refuses a NATS server that offers no TLS, since there is no certificate to check', async () => {
    const plain = await plainServer('INFO {"server_id":"PLAIN","proto":1,"max_payload":1048576}\r\n');
    try {
      const error = await probeBrokerCertificate(plain.url, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerWithoutTls);
      expect((error as BrokerWithoutTls).retryable).toBe(false);
    } finally {
      await plain.close();
    }
  });

  it('says the broker is unreachable when it hangs up before the handshake', async () => {
    const rude = await plainServer('INFO {"server_id":"RUDE","tls_required":true}\r\n', true);
    try {
      const error = await probeBrokerCertificate(rude.url, { timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BrokerUnreachable);
      expect((error as BrokerUnreachable).reason).toMatch(/TLS handshake failed|closed the connection/);
    } finally {
      await rude.close();
    }
  });
});
