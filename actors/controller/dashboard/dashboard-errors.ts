import { OperatorError } from '../../shared/operator-error';

/** `--listen` does not read as a loopback address and a port. */
export class DashboardListenInvalid extends OperatorError {
  constructor(value: string, problem: string) {
    super(`--listen is not an address for the dashboard: ${problem}`, {
      value,
      next: 'give 127.0.0.1:PORT (or [::1]:PORT, or a bare PORT), e.g. --listen 127.0.0.1:8470; to see the page from another machine, forward the port with `ssh -L 8470:127.0.0.1:8470 HOST`',
    });
  }
}

/** The dashboard could not listen on its address (in use, not allowed). */
export class DashboardListenFailed extends OperatorError {
  constructor(address: string, reason: string, cause?: unknown) {
    super(`the dashboard could not listen (${reason})`, {
      value: address,
      next: 'give another port with --listen 127.0.0.1:PORT (or --listen 0 for any free one), then run mesh-control dashboard again',
      retryable: true,
      cause,
    });
  }
}
