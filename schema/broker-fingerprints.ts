import * as z from 'zod';
import { Sha256Hex } from './primitives';

/**
 * The broker certificates a node pins, by SHA-256 fingerprint: the one the broker presents, and
 * during a rotation also the next one (`mesh-control broker rotate-certificate`), in that order.
 * Never more than two and never one twice: a rotation moves one step at a time.
 */
export const BrokerFingerprints = z
  .array(Sha256Hex)
  .min(1, { error: 'at least the broker\'s current certificate is pinned' })
  .max(2, { error: 'at most two broker certificates are pinned: the current and the next' })
  .refine((fingerprints) => new Set(fingerprints).size === fingerprints.length, { error: 'a broker certificate is named twice' });
/** See {@link BrokerFingerprints}. */
export type BrokerFingerprints = z.infer<typeof BrokerFingerprints>;
