import type { DoctorReport } from '../../../schema/doctor';
import type { HostKind } from '../../../schema/resource';

/** A node holding an identity, as the heartbeat row reads it. */
export interface HeardNode {
  name: string;
  kind: HostKind;
  /** When it was last heard from (or enrolled, if never heard). */
  heardAt: Date;
}

/** A node's latest declaration sent that it has not reported on. */
export interface UnreportedSend {
  node: string;
  kind: HostKind;
  /** `enrolled` or `disconnected`. */
  lifecycleState: string;
  generation: number;
  sentAt: Date;
}

/** A call still running. */
export interface RunningCall {
  id: string;
  verb: string;
  startedAt: Date;
}

/** An open plan, as the plan row (S3) reads it. */
export interface OpenPlan {
  id: number;
  module: string;
  version: string;
  /** `opening`, `held`, `sendingFirst`, `awaitingFirst`, `sending` or `stopped`. */
  state: string;
  /** When the tier it is in began: the first machine's send while awaiting it, else the plan's last write. */
  tierSince: Date;
  /** The first machine (one-first), or null. */
  first: string | null;
  /** Why it stopped, or null. */
  note: string | null;
}

/** A node whose reports are refused as stale (older or a replay) with none kept since, as S13 reads it. */
export interface StaleRefusal {
  node: string;
  /** `older` or `duplicate`. */
  reason: string;
  /** Every refusal of this reason counted for the node. */
  count: number;
  /** When its refusals began to go unanswered: its last kept report, or its first refusal if later. */
  since: Date;
  /** The latest refusal. */
  lastAt: Date;
}

/**
 * One of the broker's advisories (S9) the controller heard that still holds by observation: a
 * node's declaration delivered its maximum number of times and no report kept since, or a node's
 * consumer deleted and not there again.
 */
export interface BusAdvisory {
  kind: 'max-deliveries' | 'consumer-deleted';
  /** The node. */
  about: string;
  /** When the controller heard it. */
  at: Date;
  /** The advisory's facts in the mesh's words (the stream sequence and deliveries). */
  detail: string;
}

/**
 * What the watchdog's rows look at, each read a narrow question of the store, the calls bucket,
 * the doctor's board or the process, so a row can be driven by a small fake. A read that throws
 * is a row that cannot see.
 */
export interface WatchdogView {
  /** Every node holding an identity (enrolled or disconnected). */
  heardNodes(): Promise<HeardNode[]>;
  /** Each node's latest declaration sent and not reported on. */
  unreportedSends(): Promise<UnreportedSend[]>;
  /** The calls still running. */
  runningCalls(): Promise<RunningCall[]>;
  /** The doctor's last run in this controller, or undefined before the first. */
  doctorLast(): Promise<DoctorReport | undefined>;
  /** The longest the controller's event loop was held up since it was last asked, in milliseconds. */
  eventLoopHeldMs(): Promise<number>;
  /** The plans not ended (S3). */
  openPlans(): Promise<OpenPlan[]>;
  /** The nodes whose reports are refused as stale with none kept since (S13). */
  staleRefusals(): Promise<StaleRefusal[]>;
  /** The broker's advisories heard that still hold (S9); throws when the controller is not listening to them. */
  busAdvisories(): Promise<BusAdvisory[]>;
  /** When this controller began watching (silence before it is not the nodes'). */
  watchingSince(): Date;
}
