import { createHash, timingSafeEqual, X509Certificate } from 'node:crypto';
import { OperatorError } from '../operator-error';

/**
 * SHA-256 of a certificate's DER bytes, lower-case hex: the fingerprint a token pins. Takes the
 * certificate as PEM text or as DER bytes (PEM bytes work too); the first certificate of a PEM
 * bundle is the one fingerprinted.
 */
export function certificateFingerprint(derOrPem: string | Uint8Array): string {
  let der: Buffer;
  try {
    der = new X509Certificate(typeof derOrPem === 'string' ? derOrPem : Buffer.from(derOrPem)).raw;
  } catch (error) {
    throw new CertificateUnreadable(error);
  }
  return createHash('sha256').update(der).digest('hex');
}

/**
 * Compares two SHA-256 fingerprints without leaking where they differ. Case and colons are
 * ignored, so `AB:CD:…` as openssl prints it equals `abcd…`. Anything that is not 32 bytes of
 * hex equals nothing.
 */
export function fingerprintsEqual(a: string, b: string): boolean {
  const left = normalise(a);
  const right = normalise(b);
  if (left === undefined || right === undefined) return false;
  return timingSafeEqual(Buffer.from(left, 'hex'), Buffer.from(right, 'hex'));
}

/** The lower-case 64-hex form of a fingerprint given in any accepted spelling, or undefined. */
export function normaliseFingerprint(fingerprint: string): string | undefined {
  return normalise(fingerprint);
}

function normalise(fingerprint: string): string | undefined {
  if (typeof fingerprint !== 'string') return undefined;
  const hex = fingerprint.trim().replace(/:/g, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/** Bytes given as a certificate do not parse as one. */
export class CertificateUnreadable extends OperatorError {
  constructor(cause: unknown) {
    super('the certificate could not be read as PEM or DER', {
      next: 'check the file holds an X.509 certificate: openssl x509 -noout -text -in FILE',
      cause,
    });
  }
}
