import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { certificateFingerprint } from '../crypto';
import { startCapturingTlsServer } from '../testing/capturing-tls-server';
import { BrokerAddressInvalid, BrokerCertificateOutOfDate, BrokerUnreachable, FingerprintMismatch } from './bus-errors';
import { connectPinned } from './connect-pinned';
import { makeTestCertificate, type TestCertificate } from './test-certificates';

const PASSWORD = 'correct-horse-battery-staple';
const credentials = { user: 'alice', pass: PASSWORD, reconnect: false, timeout: 2000 };

let dir: string;
let genuine: TestCertificate;
let impostor: TestCertificate;
let signedByGenuine: TestCertificate;
let expired: TestCertificate;
let notYetValid: TestCertificate;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-connect-pinned-'));
  genuine = makeTestCertificate(dir, 'genuine');
  impostor = makeTestCertificate(dir, 'impostor');
  signedByGenuine = makeTestCertificate(dir, 'signed', { issuer: genuine });
  expired = makeTestCertificate(dir, 'expired', { validity: { from: '20200101000000Z', to: '20200102000000Z' } });
  notYetValid = makeTestCertificate(dir, 'future', { validity: { from: '20990101000000Z', to: '20990102000000Z' } });
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('connecting to a pinned broker', () => {
  it('refuses a broker whose certificate is not the pinned one, having sent it nothing after the handshake', async () => {
    const broker = await startCapturingTlsServer({ certificates: [impostor] });
    let error: unknown;
    try {
      error = await connectPinned(broker.url, certificateFingerprint(genuine.certPem), credentials).catch((e: unknown) => e);
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(error).toBeInstanceOf(FingerprintMismatch);
    expect(broker.connections).toHaveLength(1);
    expect(broker.connections[0]?.handshakeCompleted).toBe(true);
    const sent = broker.everythingReceived();
    expect(sent).not.toContain('CONNECT');
    expect(sent).not.toContain(PASSWORD);
    expect(sent).toBe('');
  });

  it('quotes both fingerprints and names re-enrolment or interception as the next step', async () => {
    const broker = await startCapturingTlsServer({ certificates: [impostor] });
    const expected = certificateFingerprint(genuine.certPem);
    const found = certificateFingerprint(impostor.certPem);
    let error: unknown;
    try {
      error = await connectPinned(broker.url, expected.toUpperCase(), credentials).catch((e: unknown) => e);
    } finally {
      await broker.close();
    }
    const mismatch = error as FingerprintMismatch;
    expect(mismatch.expected).toBe(expected);
    expect(mismatch.found).toBe(found);
    expect(mismatch.url).toBe(broker.url);
    expect(mismatch.message).toContain(expected);
    expect(mismatch.message).toContain(found);
    expect(mismatch.next).toContain(`the broker at ${broker.url} is not the one this token/host pinned`);
    expect(mismatch.next).toContain('nox-mesh-host enrol --token');
    expect(mismatch.next).toContain('intercepting');
  });

  it('refuses a broker that changes to another certificate between the probe and the connection', async () => {
    const broker = await startCapturingTlsServer({ certificates: [genuine, impostor] });
    let error: unknown;
    try {
      error = await connectPinned(broker.url, certificateFingerprint(genuine.certPem), credentials).catch((e: unknown) => e);
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(error).toBeInstanceOf(FingerprintMismatch);
    expect((error as FingerprintMismatch).found).toBe(certificateFingerprint(impostor.certPem));
    expect(broker.connections.length).toBeGreaterThanOrEqual(2);
    expect(broker.everythingReceived()).not.toContain('CONNECT');
    expect(broker.everythingReceived()).not.toContain(PASSWORD);
  });

  it('refuses a broker that changes to a certificate the pinned one signed', async () => {
    const broker = await startCapturingTlsServer({ certificates: [genuine, signedByGenuine] });
    let error: unknown;
    try {
      error = await connectPinned(broker.url, certificateFingerprint(genuine.certPem), credentials).catch((e: unknown) => e);
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(error).toBeInstanceOf(FingerprintMismatch);
    expect((error as FingerprintMismatch).found).toBe(certificateFingerprint(signedByGenuine.certPem));
    expect(broker.connections).toHaveLength(2);
    expect(broker.everythingReceived()).toBe('');
  });

  it('sends CONNECT with the credentials once the certificate is the pinned one', async () => {
    const broker = await startCapturingTlsServer({ certificates: [genuine] });
    try {
      const nc = await connectPinned(broker.url, certificateFingerprint(genuine.certPem), credentials);
      await nc.close();
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(broker.connections).toHaveLength(2);
    expect(broker.connections[0]?.received.length).toBe(0);
    expect(broker.connections[1]?.received.toString('latin1')).toMatch(/^CONNECT \{.*"pass":"correct-horse-battery-staple"/);
  });

  it.each([
    ['has expired', () => expired, 'Jan  2 00:00:00 2020 GMT'],
    ['is not valid yet', () => notYetValid, 'Jan  2 00:00:00 2099 GMT'],
  ])('says so, naming the clock, when the pinned certificate %s, and sends nothing', async (_case, certificate, validTo) => {
    const broker = await startCapturingTlsServer({ certificates: [certificate()] });
    let error: unknown;
    try {
      error = await connectPinned(broker.url, certificateFingerprint(certificate().certPem), credentials).catch((e: unknown) => e);
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(error).toBeInstanceOf(BrokerCertificateOutOfDate);
    expect((error as BrokerCertificateOutOfDate).message).toContain(validTo);
    expect((error as BrokerCertificateOutOfDate).next).toContain('date -u');
    expect(broker.everythingReceived()).toBe('');
  });

  it('says the broker is unreachable within milliseconds when nothing listens at the address', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `tls://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const started = performance.now();
    const error = await connectPinned(url, certificateFingerprint(genuine.certPem), credentials).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(BrokerUnreachable);
    expect((error as BrokerUnreachable).retryable).toBe(true);
    expect((error as BrokerUnreachable).toText()).toContain(url);
  });

  it('says the broker is unreachable when it takes the connection but never finishes the NATS handshake', async () => {
    const broker = await startCapturingTlsServer({ certificates: [genuine], silent: true });
    let error: unknown;
    const started = performance.now();
    try {
      error = await connectPinned(broker.url, certificateFingerprint(genuine.certPem), { ...credentials, timeout: 300 }).catch((e: unknown) => e);
    } finally {
      await broker.close();
    }
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(BrokerUnreachable);
    expect((error as BrokerUnreachable).reason).toBe('the NATS handshake timed out');
  });

  it('refuses an address it cannot dial and a pin that is not a fingerprint, before dialling', async () => {
    const fingerprint = certificateFingerprint(genuine.certPem);
    await expect(connectPinned('http://127.0.0.1:4222', fingerprint)).rejects.toBeInstanceOf(BrokerAddressInvalid);
    await expect(connectPinned('tls://user:pw@127.0.0.1:4222', fingerprint)).rejects.toBeInstanceOf(BrokerAddressInvalid);
    await expect(connectPinned('tls://127.0.0.1:4222', fingerprint.slice(2))).rejects.toThrow(/SHA-256/);
  });
});
