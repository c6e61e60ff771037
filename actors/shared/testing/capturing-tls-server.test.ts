import { promises as fs } from 'node:fs';
import { connect as netConnect } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { makeTestCertificate, type TestCertificate } from '../bus/test-certificates';
import { startCapturingTlsServer } from './capturing-tls-server';

let dir: string;
let first: TestCertificate;
let second: TestCertificate;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-capturing-'));
  first = makeTestCertificate(dir, 'first');
  second = makeTestCertificate(dir, 'second');
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Reads the greeting line, then runs `after` on the socket. */
function dial(port: number, after: (socket: import('node:net').Socket) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('error', reject);
    socket.once('data', (greeting) => {
      expect(greeting.toString()).toMatch(/^INFO \{.*"tls_required":true.*\}\r\n$/);
      after(socket);
      resolve();
    });
  });
}

describe('the capturing TLS server', () => {
  it('records what a client sends inside TLS, answers PING, and changes certificate per connection', async () => {
    const server = await startCapturingTlsServer({ certificates: [first, second] });
    try {
      const seen: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        await dial(server.port, (socket) => {
          const secure = tlsConnect({ socket, rejectUnauthorized: false }, () => {
            seen.push(secure.getPeerX509Certificate()?.toString() ?? '');
            secure.write(`CONNECT {"n":${i}}\r\nPING\r\n`);
          });
          secure.on('data', (reply) => {
            if (reply.toString() === 'PONG\r\n') secure.end();
          });
        });
      }
      await server.settled();
      expect(seen).toEqual([first.certPem, second.certPem, second.certPem]);
      expect(server.connections.map((c) => c.received.toString())).toEqual([0, 1, 2].map((i) => `CONNECT {"n":${i}}\r\nPING\r\n`));
      expect(server.connections.every((c) => c.handshakeCompleted)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('records a client that writes in the clear instead of starting TLS', async () => {
    const server = await startCapturingTlsServer({ certificates: [first] });
    try {
      await dial(server.port, (socket) => socket.end('CONNECT {"pass":"in the clear"}\r\n'));
      await server.settled();
      expect(server.connections[0]?.handshakeCompleted).toBe(false);
      expect(server.everythingReceived()).toBe('CONNECT {"pass":"in the clear"}\r\n');
    } finally {
      await server.close();
    }
  });
});
