/**
 * The exit statuses of both command lines, the same for every verb so that a script can act on
 * them without knowing the verb: each verb's `--help` and the README list them.
 */
export const EXIT = {
  /** Done, and the machine matches what the host holds (or nothing was asked of it). */
  converged: 0,
  /** Something failed, was refused, or could not be kept; what is said on stderr or in the report. */
  failed: 1,
  /** The command line itself is wrong: an unknown verb or option, a missing value. Nothing was done. */
  usage: 2,
  /** The planned-but-not-built verbs of the controller say so with this status. */
  notBuilt: 3,
  /** The host's store is damaged, or missing where the state directory shows it was in use. */
  storeDamaged: 4,
  /** The host runs, but the broker presents a certificate it does not pin: it must be enrolled again. */
  brokerNotPinned: 5,
} as const;

/** The exit statuses as the verbs' `--help` and the README say them (one paragraph, not indented). */
export const EXIT_STATUS_HELP =
  'Exit status: 0 converged (nothing failed); 1 something failed, was refused or could not be ' +
  'kept; 2 usage (the command line is wrong, nothing was done); 4 the store is damaged, or ' +
  'missing where the state directory shows earlier use; 5 the broker presents a certificate this ' +
  'node does not pin (see nox-mesh-host status).';

/** The exit statuses of `mesh-control`, as its verbs' `--help` and its manual page say them. */
export const CONTROLLER_EXIT_STATUS_HELP =
  'Exit status: 0 done (for doctor: every probe passed); 1 something failed or was refused, or a ' +
  'probe failed or could not run (said on stderr, and under --json in the document); 2 usage (the ' +
  'command line is wrong, nothing was done).';
