import * as z from 'zod';
import { IsoTime, NodeName, Sha256Hex } from './primitives';

/**
 * The broker's certificate as `mesh-control status` shows it: when it expires, the next one
 * while a rotation is under way (`mesh-control broker rotate-certificate`), and the nodes that
 * still pin only the old one — by their latest heartbeat, before the switch those that do not
 * pin the next certificate yet, after it those that do not pin the one the broker presents.
 */
export const BrokerCertificateStatus = z.strictObject({
  fingerprint: Sha256Hex,
  expires_at: IsoTime,
  next: z.strictObject({ fingerprint: Sha256Hex, expires_at: IsoTime }).nullable(),
  pinning_only_old: z.array(z.strictObject({ node: NodeName, pins: z.array(Sha256Hex) })),
  /** Nodes holding an identity whose heartbeat has not said what they pin (not heard since). */
  pins_unknown: z.array(NodeName),
});
/** See {@link BrokerCertificateStatus}. */
export type BrokerCertificateStatus = z.infer<typeof BrokerCertificateStatus>;
