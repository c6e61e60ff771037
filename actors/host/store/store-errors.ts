import { OperatorError } from '../../shared/operator-error';

/**
 * The state file and its last-good copy are both unreadable. The host refuses to start rather
 * than begin again from an empty store, which would orphan everything it owns.
 */
export class StoreCorrupt extends OperatorError {}

/** Another host process holds the store. */
export class StoreLocked extends OperatorError {}

/**
 * The state file and its last-good copy are both gone, but the state directory shows the host
 * has been used here (kept originals, a known-good version, stored contents, a damaged store).
 * Starting empty would take the host's own files for the machine's and adopt them; the host
 * refuses instead (exit status 4), naming what it found.
 */
export class StoreEvidenceWithoutState extends OperatorError {}
