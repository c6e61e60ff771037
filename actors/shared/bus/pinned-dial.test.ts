import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { certificateFingerprint } from '../crypto';
import { startCapturingTlsServer } from '../testing/capturing-tls-server';
import { pinnedDial, PIN_REFUSED_CODE } from './pinned-dial';
import { makeTestCertificate, type TestCertificate } from './test-certificates';

const PASSWORD = 'correct-horse-battery-staple';

let dir: string;
let pinnedCa: TestCertificate;
let signedByPinned: TestCertificate;
let stranger: TestCertificate;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-pinned-dial-'));
  pinnedCa = makeTestCertificate(dir, 'pinned');
  signedByPinned = makeTestCertificate(dir, 'signed', { issuer: pinnedCa });
  stranger = makeTestCertificate(dir, 'stranger');
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** The shape Node hands checkServerIdentity, for a certificate given in PEM. */
function peer(pem: string): PeerCertificate {
  return { raw: new X509Certificate(pem).raw } as PeerCertificate;
}

describe('the naive way to pin, kept as a record of why it is not used', () => {
  it('rejectUnauthorized false plus checkServerIdentity sends CONNECT and the password to a broker with any self-signed certificate', async () => {
    const impostor = await startCapturingTlsServer({ certificates: [stranger] });
    let identityChecks = 0;
    try {
      const nc = await connect({
        servers: impostor.url,
        user: 'alice',
        pass: PASSWORD,
        reconnect: false,
        timeout: 2000,
        tls: {
          rejectUnauthorized: false,
          // Would refuse every certificate, if Node ever asked; it does not when chain
          // verification is off or has failed.
          checkServerIdentity: () => {
            identityChecks += 1;
            return new Error('not the pinned certificate');
          },
        } as object,
      });
      await nc.close();
      await impostor.settled();
    } finally {
      await impostor.close();
    }
    expect(identityChecks).toBe(0);
    const leaked = impostor.everythingReceived();
    expect(leaked).toContain('CONNECT {');
    expect(leaked).toContain(PASSWORD);
  });
});

describe('pinned dial options', () => {
  it('accept the pinned certificate whatever host name the connection used', () => {
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    expect(dial.tls.checkServerIdentity('elsewhere.example', peer(pinnedCa.certPem))).toBeUndefined();
    expect(dial.tls.checkServerIdentity('', peer(pinnedCa.certPem))).toBeUndefined();
    expect(dial.refusedFingerprint()).toBeUndefined();
  });

  it('refuse any other certificate, and remember its fingerprint for the message', () => {
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    const refusal = dial.tls.checkServerIdentity('localhost', peer(signedByPinned.certPem));
    expect(refusal).toBeInstanceOf(Error);
    expect((refusal as Error & { code?: string }).code).toBe(PIN_REFUSED_CODE);
    expect(dial.refusedFingerprint()).toBe(certificateFingerprint(signedByPinned.certPem));
  });

  it('trust the pinned certificate as the only anchor, with chain verification on', () => {
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    expect(dial.tls.ca).toBe(pinnedCa.certPem);
    expect(dial.tls.rejectUnauthorized).toBe(true);
  });

  it('will not be built around a certificate that is not the pinned one', () => {
    expect(() => pinnedDial(stranger.certPem, certificateFingerprint(pinnedCa.certPem))).toThrow(/not the pinned one/);
    expect(() => pinnedDial(pinnedCa.certPem, 'not-a-fingerprint')).toThrow(/SHA-256/);
  });

  it('keep CONNECT from a broker presenting a certificate the pinned one signed', async () => {
    const broker = await startCapturingTlsServer({ certificates: [signedByPinned] });
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    try {
      const error = await connect({ servers: broker.url, user: 'alice', pass: PASSWORD, reconnect: false, timeout: 2000, tls: dial.tls }).catch((e: unknown) => e);
      expect((error as { code?: string }).code).toBe(PIN_REFUSED_CODE);
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(dial.refusedFingerprint()).toBe(certificateFingerprint(signedByPinned.certPem));
    expect(broker.connections).toHaveLength(1);
    expect(broker.everythingReceived()).toBe('');
  });

  it('keep CONNECT from a broker presenting an unrelated certificate, before any name or pin check', async () => {
    const broker = await startCapturingTlsServer({ certificates: [stranger] });
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    try {
      const error = await connect({ servers: broker.url, user: 'alice', pass: PASSWORD, reconnect: false, timeout: 2000, tls: dial.tls }).catch((e: unknown) => e);
      expect((error as { code?: string }).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(dial.refusedFingerprint()).toBeUndefined();
    expect(broker.everythingReceived()).toBe('');
  });

  it('let the NATS client connect to the pinned certificate, and CONNECT then does arrive', async () => {
    const broker = await startCapturingTlsServer({ certificates: [pinnedCa] });
    const dial = pinnedDial(pinnedCa.certPem, certificateFingerprint(pinnedCa.certPem));
    try {
      const nc = await connect({ servers: broker.url, user: 'alice', pass: PASSWORD, reconnect: false, timeout: 2000, tls: dial.tls });
      await nc.close();
      await broker.settled();
    } finally {
      await broker.close();
    }
    expect(broker.everythingReceived()).toContain(PASSWORD);
  });
});
