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
 * running. Parts start in list order, after the store, the bus and the broker's user list
 * are up and before control calls are answered, and stop in reverse order before the bus is
 * drained and the store closed. A part that fails to start stops the controller.
 */
export interface ControllerPart {
  /** A short name for the log (`tokens`, `enrolment`). */
  name: string;
  start(ctx: ControllerContext, verbs: VerbRegistry): Promise<RunningPart>;
}
