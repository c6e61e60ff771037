import * as z from 'zod';
import { BrokerFingerprints } from './broker-fingerprints';
import { HostVersion, IsoTime, NodeName } from './primitives';
import { InventoryAddress } from './inventory';
import { HostKind } from './resource';

/** Why a host cannot hear its declarations: its durable consumer, or the whole stream, is gone from the broker. */
export const DeafReason = z.enum(['consumer_not_found', 'stream_not_found']);
/** See {@link DeafReason}. */
export type DeafReason = z.infer<typeof DeafReason>;

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
  /**
   * Present only while the host cannot hear its declarations (DeafReason), since when; it keeps
   * reconciling what it holds meanwhile. Absent from every ordinary heartbeat, so a controller
   * that predates it still reads those.
   */
  deaf: z.strictObject({ since: IsoTime, reason: DeafReason }).optional(),
  /**
   * The broker certificates the host pins now (see BrokerFingerprints), so the controller can
   * say which nodes would be cut off by a certificate switch. Absent from a host that predates it.
   */
  broker_fingerprints: BrokerFingerprints.optional(),
  /**
   * The machine's addresses now (as its inventory lists them), so the endpoint its peers are
   * given follows the machine when it moves, not the network it enrolled on. Absent from a host
   * that predates it; the controller then keeps the addresses of its enrolment.
   */
  addresses: z.array(InventoryAddress).max(256, { error: 'at most 256 addresses' }).optional(),
});
/** See {@link Heartbeat}. */
export type Heartbeat = z.infer<typeof Heartbeat>;
