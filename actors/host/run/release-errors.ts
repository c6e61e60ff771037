import { OperatorError } from '../../shared/operator-error';

/** A pass over the final declaration could not remove everything the host made. */
export class ReleaseLeftResources extends OperatorError {
  constructor(node: string, left: readonly string[]) {
    super(`the final declaration left resources behind; node ${node} stays enrolled`, {
      value: left.join(', '),
      next: 'see the report for why each was left; the host tries again at its next pass',
      retryable: true,
    });
  }
}

/** The final declaration was applied, but its report did not reach the broker. */
export class ReleaseNotReported extends OperatorError {
  constructor(node: string) {
    super(`the final declaration is applied, but its report did not reach the broker; node ${node} stays enrolled`, {
      next: 'nothing to do: the host reports again once it is linked',
      retryable: true,
    });
  }
}
