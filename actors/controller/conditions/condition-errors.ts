import { OperatorError } from '../../shared/operator-error';
import { CONDITIONS_BUCKET } from './condition-buckets';

/** No condition with this id is open or recently cleared. */
export class ConditionNotFound extends OperatorError {
  constructor(id: string) {
    super(`no condition with this id is open (or cleared within ten minutes) in ${CONDITIONS_BUCKET}`, {
      value: id,
      next: 'mesh-control conditions lists the open ones; mesh-control conditions history shows those cleared',
    });
  }
}

/** `--for` of a silence is not a duration, or is longer than a week. */
export class SilenceDurationInvalid extends OperatorError {
  constructor(given: string, why: string) {
    super(`--for ${why}`, { value: given, next: 'give --for a whole number and a unit, from 1m to 7d, e.g. --for 2h' });
  }
}

/** A silence was asked for without saying why. */
export class SilenceWhyMissing extends OperatorError {
  constructor() {
    super('a silence must say why (--why is empty)', { next: 'say why the condition may be left, e.g. --why "disk replaced tomorrow, ticket 4411"' });
  }
}

/**
 * A condition was last written under a later epoch than this controller acts under: another
 * controller has acted since, and this one's word would overwrite it.
 */
export class ConditionWrittenUnderLaterEpoch extends OperatorError {
  constructor(id: string, theirs: number, ours: number) {
    super(`the condition was written under epoch ${theirs}, later than this controller's ${ours}; it was not written`, {
      value: id,
      next: 'mesh-control status says which controller acts; ask it (this one should stop)',
      retryable: false,
    });
  }
}

/** The condition kept changing under each compare-and-set tried. */
export class ConditionContended extends OperatorError {
  constructor(id: string, tries: number) {
    super(`the condition changed under every one of ${tries} compare-and-set writes; nothing was written`, {
      value: id,
      next: 'try again (mesh-control conditions show ID says how it stands)',
      retryable: true,
    });
  }
}
