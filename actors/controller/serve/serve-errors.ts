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
