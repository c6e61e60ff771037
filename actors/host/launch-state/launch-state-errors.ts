import { OperatorError } from '../../shared/operator-error';
import { messageOf } from '../../shared/message-of';

/**
 * The host could not write the launcher's files in its state directory. Until it can, the
 * launcher keeps counting starts as if the host never got going, and will roll it back.
 */
export class LaunchStateUnwritable extends OperatorError {
  constructor(file: string, cause: unknown) {
    super(`the host could not record a completed reconcile for the launcher (${messageOf(cause)}) in`, {
      value: file,
      next: 'check that the state directory is writable by the service and its disk is not full or read-only; until then the launcher counts every start as a failed one',
      cause,
    });
  }
}
