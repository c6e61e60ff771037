import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { BrokerCertificateStatus } from '../../../schema/broker-certificate-status';
import { failed, passed, ProbeCannotRun, type DoctorProbe } from './doctor-probe';

/** Thirty days: a certificate ending sooner is a warning. */
export const CERTIFICATE_WARN_MS = 30 * 86_400_000;

const RENEW = 'renew the broker certificate without enrolling anyone: mesh-control broker rotate-certificate (every node is told to pin the next certificate), then, once mesh-control status shows every node pins it, mesh-control broker rotate-certificate --switch';

/**
 * The broker certificate's expiry, read from the mesh directory's copy (mesh.json's
 * broker.cert_file): a warning inside thirty days, a failure once expired or not yet valid.
 * Given `pins` (the serving controller's store), it also warns of nodes that pin only the old
 * certificate: before a switch they would be cut off by it, after it they must be enrolled again.
 */
export function certificateProbe(certFile: string, now: () => Date, warnMs: number = CERTIFICATE_WARN_MS, pins?: () => Promise<BrokerCertificateStatus>): DoctorProbe {
  return {
    name: 'certificate',
    whenCannotRun: `check that ${certFile} exists and is readable (mesh-control init made it)`,
    run: async () => {
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(await fs.readFile(certFile));
      } catch (error) {
        throw new ProbeCannotRun(`the broker certificate ${certFile} could not be read: ${(error as Error).message}`);
      }
      const at = now().getTime();
      const ends = Date.parse(cert.validTo);
      const starts = Date.parse(cert.validFrom);
      const until = new Date(ends).toISOString();
      if (at >= ends) return failed(`the broker certificate expired at ${until}: nodes and the CLI refuse the broker`, RENEW);
      if (at < starts) return failed(`the broker certificate is valid only from ${new Date(starts).toISOString()}; this machine's clock or the certificate is wrong`, 'check this machine\'s clock, then the certificate in DIR/broker/tls');
      const days = Math.floor((ends - at) / 86_400_000);
      if (ends - at < warnMs) return { verdict: 'warn', detail: `the broker certificate expires at ${until}, in ${days} day(s)`, next: RENEW };
      const rotation = await pins?.();
      const behind = rotation?.pinning_only_old.map((entry) => entry.node) ?? [];
      if (rotation !== undefined && behind.length > 0) {
        return rotation.next === null
          ? { verdict: 'warn', detail: `valid until ${until} (${days} days); pinning only the old certificate, so cut off from the broker: ${behind.join(', ')}`, next: 'enrol each of them again: mesh-control token issue --node NAME, then nox-mesh-host enrol --token … on the machine' }
          : { verdict: 'warn', detail: `valid until ${until} (${days} days); the next certificate is announced, and not pinned yet by: ${behind.join(', ')}`, next: 'wait for them to link and take their declaration before mesh-control broker rotate-certificate --switch; a node that stays away must be enrolled again after the switch' };
      }
      return passed(`valid until ${until} (${days} days)${rotation?.next == null ? '' : `; next certificate announced and pinned by every node: mesh-control broker rotate-certificate --switch`}`);
    },
  };
}
