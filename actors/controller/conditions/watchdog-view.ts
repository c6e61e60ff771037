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
  /** When this controller began watching (silence before it is not the nodes'). */
  watchingSince(): Date;
}
