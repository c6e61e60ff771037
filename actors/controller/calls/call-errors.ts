import { OperatorError } from '../../shared/operator-error';
import { CALLS_BUCKET, CALLS_KEPT } from './calls-bucket';

/** No call with this id is kept. */
export class CallNotFound extends OperatorError {
  constructor(id: string) {
    super(`no call with this id is kept in ${CALLS_BUCKET}`, {
      value: id,
      next: `mesh-control calls lists the calls kept (the last ${CALLS_KEPT}, for 14 days); check the id against it`,
    });
  }
}
