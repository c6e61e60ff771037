import type { PeerCertificate } from 'node:tls';
import type { TlsOptions } from '@nats-io/transport-node';
import { certificateFingerprint, fingerprintsEqual, normaliseFingerprint } from '../crypto';

/**
 * The Node TLS options the NATS client hands to `tls.connect` (it copies every field of
 * `tls`), narrowed to the ones a pinned dial sets.
 */
export interface PinnedTlsOptions extends TlsOptions {
  ca: string;
  rejectUnauthorized: true;
  allowPartialTrustChain: true;
  checkServerIdentity: (host: string, certificate: PeerCertificate) => Error | undefined;
}

/** TLS options for a connection that only the pinned certificate can complete. */
export interface PinnedDial {
  tls: PinnedTlsOptions;
  /**
   * The fingerprint of the last certificate refused by the pin check, if any: a broker that
   * changed certificate after the probe, under a chain the pinned one vouches for.
   */
  refusedFingerprint(): string | undefined;
}

/** The `code` on the error the pin check returns, so it can be told from other TLS failures. */
export const PIN_REFUSED_CODE = 'ERR_MESH_FINGERPRINT_MISMATCH';

/**
 * Builds the TLS options for the real connection, from the certificate the probe read and
 * found matching the pin. Two locks, because either alone is not enough:
 *
 * - `ca` is that certificate alone (trusted as an anchor even when it is not self-signed), and
 *   `rejectUnauthorized` stays on, so the handshake fails unless the chain ends at it. This is
 *   also what makes Node call `checkServerIdentity` at all: it skips it when chain
 *   verification failed, which is why `rejectUnauthorized: false` plus a fingerprint check
 *   pins nothing and lets CONNECT, with its credentials, go out to anyone.
 * - `checkServerIdentity` compares the presented certificate's fingerprint with the pin and
 *   ignores the host name: pinning replaces name checks, so a certificate whose names do not
 *   include the address still passes, and one the pinned certificate merely signed does not.
 *
 * Node runs both before `secureConnect`; the NATS client writes CONNECT only after it.
 *
 * `pinnedFingerprints` may name two certificates (the broker's and, during a rotation, its
 * next): `certPem` must be one of them. `alsoTrusted`, when given, lists certificates (PEM) to
 * trust as well at each later reconnection by the NATS client itself.
 */
export function pinnedDial(certPem: string, pinnedFingerprints: string | readonly string[], alsoTrusted?: () => readonly string[]): PinnedDial {
  const pins = (typeof pinnedFingerprints === 'string' ? [pinnedFingerprints] : pinnedFingerprints).map((given) => {
    const pin = normaliseFingerprint(given);
    if (pin === undefined) throw new TypeError(`a pinned fingerprint must be SHA-256 hex, got ${JSON.stringify(given)}`);
    return pin;
  });
  if (pins.length === 0) throw new TypeError('a pinned dial needs at least one pinned fingerprint');
  if (!pins.some((pin) => fingerprintsEqual(certificateFingerprint(certPem), pin))) {
    throw new TypeError('the certificate given as trust anchor is not the pinned one; compare the probe with the pin first');
  }
  // Certificates the owner may come to trust while the connection lives (a broker certificate
  // rotated under a client that reconnects by itself): read at every (re)connection, each one
  // both an anchor and a pin, so neither lock loosens for anything else.
  const extra = (): string[] => (alsoTrusted === undefined ? [] : [...alsoTrusted()]);
  let refused: string | undefined;
  const tls: PinnedTlsOptions = {
    ca: certPem,
    rejectUnauthorized: true,
    allowPartialTrustChain: true,
    checkServerIdentity: (_host, certificate) => {
      const presented = certificate.raw === undefined ? undefined : certificateFingerprint(certificate.raw);
      const accepted = [...pins, ...extra().map((pem) => certificateFingerprint(pem))];
      if (presented !== undefined && accepted.some((pin) => fingerprintsEqual(presented, pin))) return undefined;
      refused = presented;
      return Object.assign(new Error(`the broker presented certificate sha256 ${presented ?? '(none)'}, not the pinned ${pins.join(' or ')}`), { code: PIN_REFUSED_CODE });
    },
  };
  if (alsoTrusted !== undefined) {
    Object.defineProperty(tls, 'ca', { enumerable: true, get: () => [certPem, ...extra()].join('\n') });
  }
  return { tls, refusedFingerprint: () => refused };
}
