import { OperatorError } from '../../shared/operator-error';

/**
 * The state file and its last-good copy are both unreadable. The host refuses to start rather
 * than begin again from an empty store, which would orphan everything it owns.
 */
export class StoreCorrupt extends OperatorError {}

/** Another host process holds the store. */
export class StoreLocked extends OperatorError {}
