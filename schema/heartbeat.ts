import * as z from 'zod';
import { HostVersion, IsoTime, NodeName } from './primitives';
import { HostKind } from './resource';

/**
 * The host's periodic "still here", sent upward whether or not anything happened, so silence
 * means something. The controller records last contact from it; `host_kind` tells a reader
 * that an episodic host going quiet is ordinary.
 */
export const Heartbeat = z.strictObject({
  node: NodeName,
  sent_at: IsoTime,
  version_running: HostVersion,
  host_kind: HostKind,
  seconds_since_linked: z.number().min(0, { error: 'must not be negative' }).nullable(),
  last_reconcile_at: IsoTime.nullable(),
  uptime_seconds: z.number().min(0, { error: 'must not be negative' }),
});
/** See {@link Heartbeat}. */
export type Heartbeat = z.infer<typeof Heartbeat>;
