import * as z from 'zod';
import { IsoTime } from './primitives';

/**
 * The value of the key `holder` in the broker's KV bucket `mesh-controller_lease`: which
 * controller holds the lease. `instance` is drawn at random by each serving process, so a
 * controller can tell its own write (one that landed after it had given up waiting for it) from
 * another's, even another process on the same machine with a recycled pid.
 */
export const LeaseHolder = z.strictObject({
  /** `<hostname>:<pid>`, for a person reading status or the log. */
  controller: z.string().min(1),
  instance: z.string().regex(/^[0-9a-f]{16,64}$/, { error: 'expected a random instance id in lowercase hex' }),
  taken_at: IsoTime,
  renewed_at: IsoTime,
});
/** See {@link LeaseHolder}. */
export type LeaseHolder = z.infer<typeof LeaseHolder>;
