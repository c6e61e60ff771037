import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CertificateUnreadable, certificateFingerprint, fingerprintsEqual } from './fingerprint';

let dir: string;
let pem: string;
let der: Buffer;
let opensslFingerprint: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-fingerprint-'));
  const cert = path.join(dir, 'broker.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ed25519', '-nodes', '-keyout', path.join(dir, 'broker.key'), '-out', cert, '-days', '1', '-subj', '/CN=mesh.example'], { stdio: 'pipe' });
  pem = await fs.readFile(cert, 'utf8');
  der = execFileSync('openssl', ['x509', '-in', cert, '-outform', 'DER']);
  // "sha256 Fingerprint=AB:CD:…" (the label's case differs between openssl versions).
  const printed = execFileSync('openssl', ['x509', '-in', cert, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' });
  opensslFingerprint = printed.trim().split('=')[1] as string;
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('certificate fingerprints', () => {
  it('equals the SHA-256 fingerprint openssl prints, from PEM text, PEM bytes or DER bytes', () => {
    expect(opensslFingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const expected = opensslFingerprint.replace(/:/g, '').toLowerCase();
    expect(certificateFingerprint(pem)).toBe(expected);
    expect(certificateFingerprint(Buffer.from(pem))).toBe(expected);
    expect(certificateFingerprint(der)).toBe(expected);
  });

  it("compares equal to openssl's colon-separated upper-case form", () => {
    expect(fingerprintsEqual(opensslFingerprint, certificateFingerprint(pem))).toBe(true);
  });

  it('tells apart fingerprints that differ in one digit', () => {
    const ours = certificateFingerprint(pem);
    const changed = `${ours.slice(0, 40)}${ours[40] === '0' ? '1' : '0'}${ours.slice(41)}`;
    expect(fingerprintsEqual(ours, changed)).toBe(false);
  });

  it('treats anything that is not a SHA-256 fingerprint as equal to nothing', () => {
    const ours = certificateFingerprint(pem);
    expect(fingerprintsEqual(ours, ours.slice(0, 62))).toBe(false);
    expect(fingerprintsEqual('', '')).toBe(false);
    expect(fingerprintsEqual(`${ours.slice(0, 62)}zz`, `${ours.slice(0, 62)}zz`)).toBe(false);
  });

  it('refuses bytes that are not a certificate', () => {
    expect(() => certificateFingerprint('-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n')).toThrow(CertificateUnreadable);
    expect(() => certificateFingerprint(new Uint8Array([1, 2, 3]))).toThrow(CertificateUnreadable);
  });
});
