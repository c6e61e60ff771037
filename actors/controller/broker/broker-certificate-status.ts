import type { BrokerCertificateStatus } from '../../../schema/broker-certificate-status';
import type { Sql } from '../store/sql-store';
import { readBrokerCertificates } from './broker-certificates';
import { listNodePins } from './broker-pins.repo';

/**
 * The broker certificate's part of status: its expiry, the next one while a rotation is under
 * way, and which nodes pin only the old one (see BrokerCertificateStatus). Throws when the
 * certificate cannot be read, for status to show as a problem.
 */
export async function brokerCertificateStatus(store: Sql, certFile: string, brokerDir: string): Promise<BrokerCertificateStatus> {
  const certificates = await readBrokerCertificates(certFile, brokerDir);
  const target = (certificates.next ?? certificates.current).fingerprint;
  const pins = await listNodePins(store);
  return {
    fingerprint: certificates.current.fingerprint,
    expires_at: certificates.current.expires_at,
    next: certificates.next === null ? null : { fingerprint: certificates.next.fingerprint, expires_at: certificates.next.expires_at },
    pinning_only_old: pins.flatMap((entry) => (entry.pins !== null && !entry.pins.includes(target) ? [{ node: entry.node, pins: entry.pins }] : [])),
    pins_unknown: pins.filter((entry) => entry.pins === null).map((entry) => entry.node),
  };
}

/** The status line for a person. */
export function formatBrokerCertificate(status: BrokerCertificateStatus, now: Date): string {
  const days = Math.floor((Date.parse(status.expires_at) - now.getTime()) / 86_400_000);
  const parts = [`broker certificate: sha256 ${status.fingerprint.slice(0, 16)}… expires ${status.expires_at} (${days < 0 ? 'expired' : `in ${days} day${days === 1 ? '' : 's'}`})`];
  if (status.next !== null) parts.push(`next sha256 ${status.next.fingerprint.slice(0, 16)}… announced, switch with mesh-control broker rotate-certificate --switch`);
  const old = status.pinning_only_old.map((entry) => entry.node);
  if (old.length > 0) {
    parts.push(status.next === null
      ? `pinning only the old one: ${old.join(', ')} (enrol each again: mesh-control token issue --node NAME)`
      : `not pinning the next one yet: ${old.join(', ')}`);
  }
  if (status.pins_unknown.length > 0) parts.push(`pins not yet heard from: ${status.pins_unknown.join(', ')}`);
  return parts.join('; ');
}
