import type { ConditionEventName } from '../../../schema/condition';

/**
 * Where the controller says its events: `mesh.controller.event.<event>`. Under the controller's
 * own `mesh.>`; the operator's CLI may publish only `mesh.control.>` (a different token), and
 * nodes live in an account of their own that imports none of it.
 */
export const CONTROLLER_EVENT_ROOT = 'mesh.controller.event';

/** The subject a condition's transition is published on. */
export function conditionEventSubject(event: ConditionEventName): string {
  return `${CONTROLLER_EVENT_ROOT}.${event}`;
}
