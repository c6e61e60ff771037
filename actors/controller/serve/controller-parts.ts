import type { VerbRegistry } from '../control/verb-registry';
import type { ControllerContext } from '../controller-context';

/** A part of the serving controller, running until stopped. */
export interface RunningPart {
  /** Stops the part's own work (timers, subscriptions) and waits for what is under way. */
  stop(): Promise<void>;
}

/**
 * One part of the serving controller: the token sweep, the enrolment responder, the report
 * receiver, the composer… `start` is given the controller's context and the verb registry;
 * it registers the control verbs it answers, starts its own work and resolves once it is
 * running. Parts run in groups, each group one child of the supervision tree (serve/parts.ts):
 * a group starts once this controller holds the lease and the broker's user list is open, its
 * parts in list order, before control calls are answered; it stops in reverse order. A part
 * that fails to start fails its child, which is restarted after a backoff; so `start` may run
 * again in the same process, and registering its verbs again is allowed (VerbRegistry.scoped).
 */
export interface ControllerPart {
  /** A short name for the log (`tokens`, `enrolment`). */
  name: string;
  start(ctx: ControllerContext, verbs: VerbRegistry): Promise<RunningPart>;
}
