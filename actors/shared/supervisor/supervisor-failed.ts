import { OperatorError, quote } from '../operator-error';

/**
 * The root supervisor itself failed (not one of its children): the supervision tree is broken,
 * which is a bug, so the process exits non-zero with the error for the bug report.
 */
export class SupervisorFailed extends OperatorError {
  constructor(supervisor: string, cause: unknown) {
    super(`supervisor ${quote(supervisor)} failed itself, so every child was stopped`, {
      value: cause instanceof Error ? cause.message : String(cause),
      next: 'report this as a bug with the log around this line; the service manager starts the process again',
      cause,
    });
  }
}
