import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { createSecureContext, TLSSocket } from 'node:tls';

/** A certificate and its private key, both PEM. */
export interface ServerCertificate {
  certPem: string;
  keyPem: string;
}

/** What one client did on one connection to the capturing server. */
export interface CapturedConnection {
  /** 0 for the first connection, counting up. */
  index: number;
  /** The certificate this connection was offered. */
  certificate: ServerCertificate;
  /** True once the client finished the TLS handshake (it accepted, or did not check, the certificate). */
  handshakeCompleted: boolean;
  /** Everything the client sent inside TLS after the handshake, decrypted. */
  received: Buffer;
  /** Anything the client sent in the clear instead of starting TLS. */
  plaintext: Buffer;
  /** Settles when the connection has closed. */
  closed: Promise<void>;
}

/** A listening capturing server; see `startCapturingTlsServer`. */
export interface CapturingTlsServer {
  /** `tls://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Connections so far, in the order they arrived. */
  readonly connections: readonly CapturedConnection[];
  /** Everything every client sent after its handshake or in the clear, as one latin1 string. */
  everythingReceived(): string;
  /** Settles once every connection opened so far has closed. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** How the capturing server presents itself. */
export interface CapturingTlsServerOptions {
  /**
   * Certificates to present, one per connection in order; the last one is repeated. Two
   * entries make a broker that changes certificate between a client's probe and its connect.
   */
  certificates: readonly ServerCertificate[];
  /** Leave PING unanswered, so a client's NATS handshake never completes. Default false. */
  silent?: boolean;
}

const TLS_HANDSHAKE_RECORD = 0x16;

/**
 * A stand-in broker that speaks just enough NATS to make a client show what it would send: it
 * greets with an INFO line saying TLS is required, takes the client's TLS handshake, answers
 * PING with PONG (so a client that sends CONNECT believes it connected), and records every byte
 * the client sends after the handshake. It never checks credentials. Tests use it to prove
 * that no CONNECT, and no password, leaves a client that refused the certificate.
 */
export async function startCapturingTlsServer(options: CapturingTlsServerOptions): Promise<CapturingTlsServer> {
  if (options.certificates.length === 0) throw new TypeError('the capturing server needs at least one certificate');
  const contexts = options.certificates.map((certificate) => createSecureContext({ cert: certificate.certPem, key: certificate.keyPem }));
  const connections: CapturedConnection[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((socket) => {
    const index = connections.length;
    const which = Math.min(index, options.certificates.length - 1);
    let markClosed: () => void = () => undefined;
    const connection: CapturedConnection = {
      index,
      certificate: options.certificates[which] as ServerCertificate,
      handshakeCompleted: false,
      received: Buffer.alloc(0),
      plaintext: Buffer.alloc(0),
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
    };
    connections.push(connection);
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      markClosed();
    });
    socket.on('error', () => undefined);
    socket.write(`INFO ${JSON.stringify(greeting(index))}\r\n`);

    // TLS runs over a stream fed from the socket by hand, so the first byte can be looked at
    // (a handshake record, or plain text that is recorded) without losing it.
    const feed = new Duplex({
      read: () => undefined,
      write: (chunk: Buffer, _encoding, callback) => {
        socket.write(chunk, callback);
      },
      final: (callback) => {
        socket.end();
        callback();
      },
    });
    let tlsStarted: boolean | undefined;
    socket.on('data', (chunk: Buffer) => {
      tlsStarted ??= chunk[0] === TLS_HANDSHAKE_RECORD;
      if (tlsStarted) feed.push(chunk);
      else connection.plaintext = Buffer.concat([connection.plaintext, chunk]);
    });
    socket.on('end', () => feed.push(null));
    socket.on('close', () => feed.destroy());

    const secure = new TLSSocket(feed, { isServer: true, secureContext: contexts[which] });
    secure.on('error', () => socket.destroy());
    secure.on('secure', () => {
      connection.handshakeCompleted = true;
    });
    let pending = '';
    secure.on('data', (chunk: Buffer) => {
      connection.received = Buffer.concat([connection.received, chunk]);
      pending += chunk.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n')) !== -1) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (line === 'PING' && options.silent !== true) secure.write('PONG\r\n');
      }
    });
  });

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `tls://127.0.0.1:${port}`,
    port,
    connections,
    everythingReceived: () => connections.map((c) => Buffer.concat([c.plaintext, c.received]).toString('latin1')).join(''),
    settled: async () => {
      await Promise.all(connections.map((c) => c.closed));
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function greeting(index: number): Record<string, unknown> {
  return {
    server_id: `CAPTURING${index}`,
    server_name: 'capturing',
    version: '2.9.10',
    proto: 1,
    host: '127.0.0.1',
    max_payload: 1048576,
    headers: true,
    auth_required: true,
    tls_required: true,
  };
}
