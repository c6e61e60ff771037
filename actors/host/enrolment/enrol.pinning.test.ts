import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FingerprintMismatch } from '../../shared/bus/bus-errors';
import { makeTestCertificate, type TestCertificate } from '../../shared/bus/test-certificates';
import { brokerPasswordFor, certificateFingerprint, encodeToken, generateSigningKeyPair, generateTokenCredentials, ready } from '../../shared/crypto';
import { startCapturingTlsServer } from '../../shared/testing/capturing-tls-server';
import { EnrolCommand } from '../cli/enrol.command';
import { runVerb } from '../profile/testing/cli-harness';
import { HostStore } from '../store/host-store';

// The token pins the broker's certificate. A server presenting another certificate must learn
// nothing: no CONNECT, so neither the one-time user's password nor the request (which carries
// the secret) ever reaches it.

let dir: string;
let root: string;
let genuine: TestCertificate;
let impostor: TestCertificate;

beforeAll(async () => {
  await ready();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'enrol-pinning-'));
  genuine = makeTestCertificate(dir, 'genuine');
  impostor = makeTestCertificate(dir, 'impostor');
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'enrol-pinning-machine-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('enrolling against a broker that is not the pinned one', () => {
  test('refuses with FingerprintMismatch, and the server never receives a CONNECT, the password or the secret', async () => {
    const server = await startCapturingTlsServer({ certificates: [impostor] });
    const { token_id, secret } = generateTokenCredentials();
    const token = encodeToken({
      broker_url: server.url,
      broker_fingerprint: certificateFingerprint(genuine.certPem),
      controller_public_key: generateSigningKeyPair().public_key,
      token_id,
      secret,
    });
    let outcome: Awaited<ReturnType<typeof runVerb>>;
    try {
      outcome = await runVerb([EnrolCommand], ['enrol', '--token', token, '--root', root, '--timeout', '5s', '--json']);
      await server.settled();
    } finally {
      await server.close();
    }

    expect(outcome.code).toBe(1);
    expect(JSON.parse(outcome.stdout)).toMatchObject({ error: { condition: FingerprintMismatch.name, retryable: true } });
    expect(outcome.stdout).toContain(certificateFingerprint(impostor.certPem));
    expect(server.connections.length).toBeGreaterThan(0);
    const sent = server.everythingReceived();
    expect(sent).not.toContain('CONNECT');
    expect(sent).not.toContain(brokerPasswordFor(secret, token_id));
    expect(sent).not.toContain(secret);
    expect(sent).toBe('');
    const state = (await new HostStore(path.join(root, 'var/lib/mesh-host')).load()).state;
    expect(state.identity).toBeNull();
    expect(state.pins).toBeNull();
  });
});
