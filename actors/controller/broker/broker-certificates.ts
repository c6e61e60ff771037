import { X509Certificate } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { certificateFingerprint } from '../../shared/crypto';
import { brokerPaths } from './broker-paths';

/** One broker certificate, as the rotation and status speak of it. */
export interface BrokerCertificateFacts {
  fingerprint: string;
  /** When it stops being valid, ISO-8601. */
  expires_at: string;
  pem: string;
}

/** The broker's certificate now, and the next one while a rotation is under way. */
export interface BrokerCertificates {
  current: BrokerCertificateFacts;
  next: BrokerCertificateFacts | null;
}

/** Where a broker directory keeps its next key and certificate, beside the current ones. */
export function nextCertificatePaths(brokerDir: string): { keyFile: string; certFile: string } {
  const { keyFile, certFile } = brokerPaths(brokerDir);
  return {
    keyFile: path.join(path.dirname(keyFile), `next-${path.basename(keyFile)}`),
    certFile: path.join(path.dirname(certFile), `next-${path.basename(certFile)}`),
  };
}

/**
 * Reads the broker's certificate (mesh.json's `cert_file`) and the next one, if
 * `mesh-control broker rotate-certificate` has made it. Throws when the current one cannot be
 * read (CertificateUnreadable for a damaged file, the file system's error otherwise).
 */
export async function readBrokerCertificates(certFile: string, brokerDir: string): Promise<BrokerCertificates> {
  const current = factsOf(await fs.readFile(certFile, 'utf8'));
  let nextPem: string | undefined;
  try {
    nextPem = await fs.readFile(nextCertificatePaths(brokerDir).certFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return { current, next: nextPem === undefined ? null : factsOf(nextPem) };
}

/** The fingerprints a declaration pins: the current certificate's, then the next one's. */
export function fingerprintsToPin(certificates: BrokerCertificates): string[] {
  return [certificates.current.fingerprint, ...(certificates.next === null ? [] : [certificates.next.fingerprint])];
}

function factsOf(pem: string): BrokerCertificateFacts {
  const fingerprint = certificateFingerprint(pem);
  return { fingerprint, expires_at: new Date(new X509Certificate(pem).validTo).toISOString(), pem };
}

/**
 * The broker certificates in the broker directory now (the current and the next), in PEM, for
 * the serving controller's own reconnections: across a switch made while it runs, the broker
 * presents the next one, which these files vouch for as mesh.json does. Read synchronously,
 * at a reconnection only; a file that cannot be read is left out.
 */
export function brokerCertificatesOnDisk(certFile: string, brokerDir: string): string[] {
  const pems: string[] = [];
  for (const file of [certFile, nextCertificatePaths(brokerDir).certFile]) {
    try {
      const pem = readFileSync(file, 'utf8');
      certificateFingerprint(pem);
      pems.push(pem);
    } catch {
      // Absent (no rotation under way) or unreadable: not trusted.
    }
  }
  return pems;
}
