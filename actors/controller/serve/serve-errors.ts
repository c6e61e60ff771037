import { OperatorError } from '../../shared/operator-error';
import { shellWord } from '../config/shell-word';

/** A controller starting could not reach its broker. */
export class BrokerUnreachableAtStart extends OperatorError {
  readonly url: string;
  constructor(url: string, reason: string, dir: string, cause?: unknown) {
    super(`the controller could not reach its broker (${reason})`, {
      value: url,
      next: `start the broker first (mesh-control broker --dir ${shellWord(dir)}, or the nats-server service), then start the controller again`,
      retryable: true,
      cause,
    });
    this.url = url;
  }
}

/**
 * The controller's supervision tree itself broke (not one of its children): a bug. Every part
 * was stopped; the process exits non-zero for its service manager to start it again.
 */
export class SupervisionTreeBroke extends OperatorError {
  constructor(text: string) {
    super('the controller\'s supervision tree broke, so every part was stopped', {
      value: text.trim(),
      next: 'report this as a bug with the log around this line; the service manager starts the controller again',
    });
  }
}
