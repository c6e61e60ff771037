import type { LeaseFailure } from '../../../machines/lease.machine';
import { OperatorError } from '../../shared/operator-error';
import { LEASE_BUCKET, LEASE_KEY } from './lease-bucket';

/** The lease is someone else's: the take found the key written by another controller. */
export class LeaseHeldElsewhere extends Error implements LeaseFailure {
  readonly refused = true;
  /** Who holds it, as its key says (`host:pid since …`), or what was found there instead. */
  readonly holder: string;
  constructor(holder: string) {
    super(`the lease is held by ${holder}`);
    this.name = 'LeaseHeldElsewhere';
    this.holder = holder;
  }
}

/** A renewal or release was refused: the key is not at this controller's revision any more. */
export class LeaseRenewalRefused extends Error implements LeaseFailure {
  readonly refused = true;
  constructor(what: string) {
    super(what);
    this.name = 'LeaseRenewalRefused';
  }
}

/**
 * The lease key holds a value no controller wrote (it is not a lease holder): written by hand
 * or by something that should not reach the bucket. The lease is not this controller's, but no
 * other controller holds it either; it is told as such, in the log and in status.
 */
export class LeaseKeyForeign extends Error implements LeaseFailure {
  readonly refused = true;
  readonly foreign = true;
  constructor(revision: number, size: number) {
    super(`the lease key holds a value no controller wrote (revision ${revision}, ${size} bytes); acting stopped until it is given back or expires, and whatever can write the bucket should be found`);
    this.name = 'LeaseKeyForeign';
  }
}

/**
 * The broker (or the store, for the epoch floor) could not be asked: nothing is known about the
 * lease, so this is retried, never taken as a loss.
 */
export class LeaseUnreachable extends Error implements LeaseFailure {
  readonly refused = false;
  constructor(what: string, cause: unknown) {
    super(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'LeaseUnreachable';
  }
}

/**
 * The lease was taken at an epoch the store's floor had already passed, and raising the bucket
 * past the floor did not help (another controller raised the floor meanwhile, or the bucket is
 * not the one the store's controllers used). The key is given back and the take tried again.
 */
export class LeaseEpochBehindFloor extends Error implements LeaseFailure {
  readonly refused = false;
  constructor(epoch: number, floor: number) {
    super(`the lease was taken at epoch ${epoch}, and the store's epoch floor is already ${floor}`);
    this.name = 'LeaseEpochBehindFloor';
  }
}

/**
 * A renewal was refused: another controller holds the lease now, or the key expired while this
 * controller could not reach the broker. It has stopped acting; the process exits so its service
 * manager starts it again, as a standby.
 */
export class LeaseLost extends OperatorError {
  readonly epoch: number | null;
  constructor(epoch: number | null, reason: string) {
    super(`the controller lost its lease (KV bucket ${LEASE_BUCKET}, key ${LEASE_KEY}${epoch === null ? '' : `, epoch ${epoch}`}) and stopped acting`, {
      value: reason,
      next: 'nothing to do if another controller took over (mesh-control status names the holder); the service manager starts this one again as a standby. If it happens often, check the link between this controller and the broker',
    });
    this.epoch = epoch;
  }
}

/**
 * Something that only the acting controller may do (send a declaration, write a plan) was asked
 * of a controller that is not acting: it does not hold the lease, or it could not renew it and
 * stopped acting 3 s before it would expire. Nothing was sent or written.
 */
export class NotActing extends OperatorError {
  constructor(what: string, why: string) {
    super(`this controller is not acting, so it did not ${what} (${why})`, {
      next: 'the acting controller does it; see mesh-control status for who holds the lease, and try again once one acts',
      retryable: true,
    });
  }
}
