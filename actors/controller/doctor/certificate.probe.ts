import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { failed, passed, ProbeCannotRun, type DoctorProbe } from './doctor-probe';

/** Thirty days: a certificate ending sooner is a warning. */
export const CERTIFICATE_WARN_MS = 30 * 86_400_000;

const RENEW = 'make a new broker certificate and key in DIR/broker/tls (mesh-control has no verb for this yet), restart the broker, and give every node the new fingerprint (they pin it): plan this before it expires';

/**
 * The broker certificate's expiry, read from the mesh directory's copy (mesh.json's
 * broker.cert_file): a warning inside thirty days, a failure once expired or not yet valid.
 */
export function certificateProbe(certFile: string, now: () => Date, warnMs: number = CERTIFICATE_WARN_MS): DoctorProbe {
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
      return passed(`valid until ${until} (${days} days)`);
    },
  };
}
