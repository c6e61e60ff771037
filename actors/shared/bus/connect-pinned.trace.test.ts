import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { certificateFingerprint } from '../crypto';
import { FingerprintMismatch } from './bus-errors';
import { connectPinned } from './connect-pinned';
import { makeTestCertificate, type TestCertificate } from './test-certificates';

// Real nats-server processes with certificates made for the case at hand, tracing every
// protocol line a client sends to a log file, so the server itself testifies to what arrived.

const PASSWORD = 'correct-horse-battery-staple';
const credentials = { user: 'alice', pass: PASSWORD, reconnect: false, timeout: 3000 };

interface TracedServer {
  url: string;
  log(): Promise<string>;
  stop(): Promise<void>;
}

let dir: string;
const servers: TracedServer[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-pinned-trace-'));
});
afterAll(async () => {
  await Promise.allSettled(servers.map((server) => server.stop()));
  await fs.rm(dir, { recursive: true, force: true });
});

/**
 * Starts nats-server on a port of its choosing with `certificate` (a chain file if `chain` is
 * given), one password user, and debug and trace logging with times to a file.
 */
async function startTracedServer(name: string, certificate: TestCertificate, chain?: string): Promise<TracedServer> {
  const logFile = path.join(dir, `${name}.log`);
  const configFile = path.join(dir, `${name}.conf`);
  await fs.writeFile(
    configFile,
    [
      'listen: "127.0.0.1:-1"',
      `tls { cert_file: ${JSON.stringify(chain ?? certificate.certFile)}, key_file: ${JSON.stringify(certificate.keyFile)} }`,
      `authorization { users: [ { user: "alice", password: ${JSON.stringify(PASSWORD)} } ] }`,
      'debug: true',
      'trace: true',
      'logtime: true',
      `log_file: ${JSON.stringify(logFile)}`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('nats-server', ['-c', configFile], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  const failed = new Promise<never>((_resolve, reject) => {
    child.once('error', reject);
    void exited.then(([code]) => reject(new Error(`nats-server exited with ${String(code)} before it was ready; see ${logFile}`)));
  });
  failed.catch(() => undefined);
  const log = async (): Promise<string> => fs.readFile(logFile, 'utf8').catch(() => '');
  const listening = await Promise.race([waitFor(log, /Listening for client connections on 127\.0\.0\.1:(\d+)/, 5000), failed]);
  const server: TracedServer = {
    url: `tls://127.0.0.1:${listening[1] as string}`,
    log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
  servers.push(server);
  await Promise.race([waitFor(log, /Server is ready/, 5000), failed]);
  return server;
}

/** Polls `read` until `pattern` matches, or fails after `timeoutMs` showing what was read. */
async function waitFor(read: () => Promise<string>, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await read();
    const match = text.match(pattern);
    if (match !== null) return match;
    if (Date.now() > deadline) throw new Error(`${pattern} did not appear within ${timeoutMs} ms in:\n${text}`);
    await sleep(10);
  }
}

/** The client ids the server logged connections for, in order. */
function clientIds(log: string): string[] {
  return [...log.matchAll(/ - (cid:\d+) - Client connection created/g)].map((match) => match[1] as string);
}

async function pubSub(nc: NatsConnection): Promise<string> {
  const subscription = nc.subscribe('mesh.check', { max: 1 });
  nc.publish('mesh.check', 'round trip');
  for await (const message of subscription) return message.string();
  throw new Error('the subscription ended without a message');
}

describe('pinned connections, as a real nats-server saw them', () => {
  let genuine: TestCertificate;
  let server: TracedServer;

  beforeAll(async () => {
    genuine = makeTestCertificate(dir, 'genuine');
    server = await startTracedServer('genuine', genuine);
  });

  it('refuses a wrong pin after a TLS handshake and nothing else: the trace shows no CONNECT from that client', async () => {
    const wrongPin = certificateFingerprint(makeTestCertificate(dir, 'someone-else').certPem);
    const error = await connectPinned(server.url, wrongPin, credentials).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FingerprintMismatch);

    const afterRefusal = await waitFor(server.log, /cid:\d+ - Client connection closed/, 3000).then(() => server.log());
    const [probe, ...others] = clientIds(afterRefusal);
    expect(others).toEqual([]);
    expect(afterRefusal).toContain(`${probe} - TLS handshake complete`);
    expect(afterRefusal).not.toContain('CONNECT');

    // The same trace does show a CONNECT once the pin is right, so its absence above means something.
    const nc = await connectPinned(server.url, certificateFingerprint(genuine.certPem), credentials);
    await nc.close();
    const afterConnect = await waitFor(server.log, /<<- \[CONNECT .*"user":"alice"/, 3000).then(() => server.log());
    const connectLines = afterConnect.split('\n').filter((line) => line.includes('<<- [CONNECT'));
    expect(connectLines).toHaveLength(1);
    expect(connectLines[0]).not.toContain(`${probe} -`);
  });

  it('connects with the right pin and can publish and subscribe with the user’s credentials', async () => {
    const nc = await connectPinned(server.url, certificateFingerprint(genuine.certPem), credentials);
    try {
      await expect(pubSub(nc)).resolves.toBe('round trip');
    } finally {
      await nc.close();
    }
  });

  it('connects when the certificate names another host, because the pin replaces the name check', async () => {
    const misnamed = makeTestCertificate(dir, 'misnamed', { commonName: 'elsewhere.example', altNames: 'DNS:elsewhere.example' });
    const elsewhere = await startTracedServer('misnamed', misnamed);
    // Control: trusting the very same certificate the ordinary way fails on its name.
    const byName = await connect({ servers: elsewhere.url, ...credentials, tls: { ca: misnamed.certPem } }).catch((e: unknown) => e);
    expect((byName as { code?: string }).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');

    const nc = await connectPinned(elsewhere.url, certificateFingerprint(misnamed.certPem), credentials);
    try {
      await expect(pubSub(nc)).resolves.toBe('round trip');
    } finally {
      await nc.close();
      await elsewhere.stop();
    }
  });

  it('connects to a broker whose certificate a private CA issued, with only that certificate pinned', async () => {
    const ca = makeTestCertificate(dir, 'private-ca', { commonName: 'Mesh private CA' });
    const issued = makeTestCertificate(dir, 'issued', { issuer: ca });
    const chainFile = path.join(dir, 'issued-chain.pem');
    await fs.writeFile(chainFile, issued.certPem + ca.certPem);
    for (const [name, chain] of [['leaf-only', undefined], ['with-chain', chainFile]] as const) {
      const issuedServer = await startTracedServer(name, issued, chain);
      try {
        const nc = await connectPinned(issuedServer.url, certificateFingerprint(issued.certPem), credentials);
        await expect(pubSub(nc)).resolves.toBe('round trip');
        await nc.close();
      } finally {
        await issuedServer.stop();
      }
    }
  });
});
