import { createPrivateKey, X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { certificateFingerprint, CertificateUnreadable } from '../../shared/crypto';
import { ProcessRunner, type CommandRunner, type RunOptions, type RunResult } from '../../shared/process/command-runner';
import { SubjectAltNameInvalid, TlsMaterialExists, TlsMaterialFailed, TlsMaterialMissing } from './broker-errors';
import { BROKER_CERTIFICATE_DAYS, defaultSubjectAltNames, generateTlsMaterial, readTlsMaterial } from './tls-material';

/** A runner whose openssl always fails, recording what it was asked. */
class FailingOpenssl implements CommandRunner {
  readonly asked: string[][] = [];
  async run(argv: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.asked.push([...argv]);
    return { argv, code: 1, signal: null, stdout: '', stderr: 'req: unable to load key', timedOut: false, durationMs: 1 };
  }
}

describe('generateTlsMaterial', () => {
  let dir: string;
  let keyFile: string;
  let certFile: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh tls-'));
    keyFile = path.join(dir, 'tls', 'broker.key');
    certFile = path.join(dir, 'tls', 'broker.crt');
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('makes a P-256 key readable by its owner alone and a ten-year certificate for the names given', async () => {
    const material = await generateTlsMaterial({ keyFile, certFile, subjectAltNames: ['mesh.example.net', '192.0.2.10', 'localhost'] });
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
    const certificate = new X509Certificate(await fs.readFile(certFile));
    expect(certificate.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(certificate.subjectAltName).toBe('DNS:mesh.example.net, DNS:localhost, IP Address:192.0.2.10');
    expect(material.subjectAltNames).toEqual(['mesh.example.net', 'localhost', '192.0.2.10']);
    expect(certificate.ca).toBe(false);
    const days = (Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)) / 86_400_000;
    expect(days).toBe(BROKER_CERTIFICATE_DAYS);
    expect(material.notAfter).toBe(new Date(certificate.validTo).toISOString());
    expect(certificate.checkPrivateKey(createPrivateKey(await fs.readFile(keyFile)))).toBe(true);
  });

  test('reports the fingerprint openssl itself computes for the certificate written', async () => {
    const material = await generateTlsMaterial({ keyFile, certFile });
    const result = await new ProcessRunner().run(['openssl', 'x509', '-noout', '-fingerprint', '-sha256', '-in', certFile]);
    const opensslSays = result.stdout.trim().split('=')[1]?.replace(/:/g, '').toLowerCase();
    expect(material.fingerprint).toBe(opensslSays);
    expect(material.certPem).toBe(await fs.readFile(certFile, 'utf8'));
  });

  test('gives a certificate Node\'s TLS accepts as its own CA, for the names it carries', async () => {
    const material = await generateTlsMaterial({ keyFile, certFile, subjectAltNames: ['localhost'] });
    const server = tls.createServer({ key: await fs.readFile(keyFile), cert: material.certPem }, (socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const handshake = (servername: string): Promise<void> => new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, servername, ca: material.certPem }, () => { socket.destroy(); resolve(); });
        socket.once('error', reject);
      });
      await expect(handshake('localhost')).resolves.toBeUndefined();
      await expect(handshake('elsewhere.example.net')).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    } finally {
      server.close();
    }
  });

  test('refuses to replace existing material, and leaves the certificate as it was', async () => {
    const first = await generateTlsMaterial({ keyFile, certFile });
    await expect(generateTlsMaterial({ keyFile, certFile })).rejects.toBeInstanceOf(TlsMaterialExists);
    expect(certificateFingerprint(await fs.readFile(certFile, 'utf8'))).toBe(first.fingerprint);
  });

  test('refuses a name that is neither a host name nor an address, before writing anything', async () => {
    for (const name of ['mesh,example', 'x\nIP.9 = 203.0.113.1', 'has space', '$ENV::x', '']) {
      await expect(generateTlsMaterial({ keyFile, certFile, subjectAltNames: [name] })).rejects.toBeInstanceOf(SubjectAltNameInvalid);
    }
    await expect(fs.access(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('leaves no key behind when openssl fails, so the next attempt can start afresh', async () => {
    const runner = new FailingOpenssl();
    const failure = generateTlsMaterial({ keyFile, certFile, runner });
    await expect(failure).rejects.toBeInstanceOf(TlsMaterialFailed);
    await expect(failure).rejects.toMatchObject({ value: expect.stringContaining('unable to load key') });
    expect(runner.asked[0]?.slice(0, 3)).toEqual(['openssl', 'req', '-new']);
    await expect(fs.access(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(generateTlsMaterial({ keyFile, certFile })).resolves.toMatchObject({ keyFile });
  });
});

describe('defaultSubjectAltNames', () => {
  test('names localhost, 127.0.0.1 and the machine', () => {
    expect(defaultSubjectAltNames('mesh-1')).toEqual(['localhost', '127.0.0.1', 'mesh-1']);
  });

  test('leaves out a machine name a certificate cannot carry', () => {
    expect(defaultSubjectAltNames('bad name')).toEqual(['localhost', '127.0.0.1']);
  });
});

describe('readTlsMaterial', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh tls-read-'));
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('reads back the fingerprint and names of existing material', async () => {
    const made = await generateTlsMaterial({ keyFile: path.join(dir, 'k'), certFile: path.join(dir, 'c'), subjectAltNames: ['localhost'] });
    await expect(readTlsMaterial(path.join(dir, 'k'), path.join(dir, 'c'))).resolves.toEqual(made);
  });

  test('a missing certificate says so', async () => {
    await expect(readTlsMaterial(path.join(dir, 'nk'), path.join(dir, 'none'))).rejects.toBeInstanceOf(TlsMaterialMissing);
  });

  test('a damaged certificate says it cannot be read', async () => {
    await fs.writeFile(path.join(dir, 'damaged'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    await expect(readTlsMaterial(path.join(dir, 'nk'), path.join(dir, 'damaged'))).rejects.toBeInstanceOf(CertificateUnreadable);
  });
});
