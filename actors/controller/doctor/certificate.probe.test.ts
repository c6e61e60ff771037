import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { certificateProbe } from './certificate.probe';
import { runProbes } from './run-probes';

// A real certificate made by openssl, read at moments before, near and after its end.

const DAY = 86_400_000;

describe('the certificate probe', () => {
  let dir: string;
  let certFile: string;
  let validTo: number;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'doctor-cert-'));
    certFile = path.join(dir, 'broker.crt');
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=broker', '-days', '100', '-keyout', path.join(dir, 'broker.key'), '-out', certFile]);
    const { X509Certificate } = await import('node:crypto');
    validTo = Date.parse(new X509Certificate(await fs.readFile(certFile)).validTo);
  });

  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const at = (ms: number) => () => new Date(ms);

  test('passes a certificate with more than thirty days left', async () => {
    const report = await runProbes([certificateProbe(certFile, at(validTo - 60 * DAY))], { source: 'directory' });
    expect(report.probes[0]).toMatchObject({ verdict: 'pass' });
  });

  test('warns of nodes that pin only the old certificate after a switch, saying how to enrol them again', async () => {
    const pins = async () => ({ fingerprint: 'a'.repeat(64), expires_at: new Date(validTo).toISOString(), next: null, pinning_only_old: [{ node: 'laptop-7', pins: ['f'.repeat(64)] }], pins_unknown: [] });
    const report = await runProbes([certificateProbe(certFile, at(validTo - 60 * DAY), undefined, pins)], { source: 'directory' });
    expect(report.probes[0]).toMatchObject({ verdict: 'warn', detail: expect.stringContaining('pinning only the old certificate, so cut off from the broker: laptop-7') });
    expect(report.probes[0]?.next).toMatch(/mesh-control token issue --node NAME/);
  });

  test('warns of nodes that do not pin an announced next certificate yet, before the switch', async () => {
    const pins = async () => ({ fingerprint: 'a'.repeat(64), expires_at: new Date(validTo).toISOString(), next: { fingerprint: 'b'.repeat(64), expires_at: new Date(validTo).toISOString() }, pinning_only_old: [{ node: 'laptop-7', pins: ['a'.repeat(64)] }], pins_unknown: [] });
    const report = await runProbes([certificateProbe(certFile, at(validTo - 60 * DAY), undefined, pins)], { source: 'directory' });
    expect(report.probes[0]).toMatchObject({ verdict: 'warn', detail: expect.stringContaining('not pinned yet by: laptop-7') });
    expect(report.probes[0]?.next).toMatch(/before mesh-control broker rotate-certificate --switch/);
  });

  test('warns inside thirty days of the end, naming the date, and still counts as ok', async () => {
    const report = await runProbes([certificateProbe(certFile, at(validTo - 10 * DAY))], { source: 'directory' });
    expect(report.probes[0]).toMatchObject({ verdict: 'warn', detail: expect.stringContaining(new Date(validTo).toISOString()) });
    expect(report.probes[0]?.next).toMatch(/broker certificate/);
    expect(report.ok).toBe(true);
  });

  test('fails a certificate that has expired', async () => {
    const report = await runProbes([certificateProbe(certFile, at(validTo + 1_000))], { source: 'directory' });
    expect(report.probes[0]).toMatchObject({ verdict: 'fail', detail: expect.stringMatching(/expired/) });
    expect(report.ok).toBe(false);
  });

  test('cannot run, never passes, when someone replaced the certificate with something else or removed it', async () => {
    const garbled = path.join(dir, 'garbled.crt');
    await fs.writeFile(garbled, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
    const report = await runProbes([certificateProbe(garbled, at(Date.now())), { ...certificateProbe(path.join(dir, 'gone.crt'), at(Date.now())), name: 'gone' }], { source: 'directory' });
    expect(report.probes.map((result) => result.verdict)).toEqual(['cannot-run', 'cannot-run']);
    expect(report.probes[1]?.detail).toContain('gone.crt');
  });
});
