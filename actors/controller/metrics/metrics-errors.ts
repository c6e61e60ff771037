import { OperatorError } from '../../shared/operator-error';

/** `--metrics-listen` does not read as an address and a port. */
export class MetricsListenInvalid extends OperatorError {
  constructor(value: string, problem: string) {
    super(`--metrics-listen is not an address to listen on: ${problem}`, {
      value,
      next: 'give HOST:PORT with a port from 1 to 65535, such as 127.0.0.1:9464 (or [::1]:9464), or leave it out to serve no metrics',
    });
  }
}

/** `--metrics-listen` names an address other machines can reach, and the operator did not say that is meant. */
export class MetricsListenNotLoopback extends OperatorError {
  constructor(value: string) {
    super('--metrics-listen names an address other machines may reach, and the metrics answer anyone who asks', {
      value,
      next: 'listen on 127.0.0.1 (or [::1]) and let the scraper reach it there, or add --metrics-allow-remote if other machines are meant to scrape it (put a firewall in front)',
    });
  }
}

/** The metrics endpoint could not be opened on its address (in use, not an address of this machine, not allowed). */
export class MetricsListenFailed extends OperatorError {
  constructor(address: string, reason: string, cause?: unknown) {
    super(`the metrics endpoint could not listen (${reason})`, {
      value: address,
      next: 'free the port or give another with --metrics-listen, then start the controller again',
      retryable: true,
      cause,
    });
  }
}
