import type { DoneActorEvent, ErrorActorEvent, EventObject } from 'xstate';

/**
 * Sample events for what XState makes up rather than what a machine declares: the outcome of
 * an invoked actor and the end of a delay. Shaped exactly as XState delivers them, so guards
 * and actions that read `event.output` or `event.error` see what they will see in production.
 */

/** `xstate.done.actor.<id>` carrying the actor's output. */
export function doneEvent<TOutput>(actorId: string, output: TOutput): DoneActorEvent<TOutput> {
  return { type: `xstate.done.actor.${actorId}`, output, actorId };
}

/** `xstate.error.actor.<id>` carrying what the actor threw. */
export function errorEvent<TError>(actorId: string, error: TError): ErrorActorEvent<TError> {
  return { type: `xstate.error.actor.${actorId}`, error, actorId };
}

/**
 * `xstate.after.<delay>.<state id>`: the end of a delay, by its name (`releaseRetryDelay`) or
 * milliseconds, in the state with that full id (`lifecycle.enrolled.retrying`).
 */
export function afterEvent(delay: string | number, stateId: string): EventObject {
  return { type: afterEventType(delay, stateId) };
}

/** The event type of `afterEvent`, for keying a spec's `events`. */
export function afterEventType(delay: string | number, stateId: string): string {
  return `xstate.after.${delay}.${stateId}`;
}
