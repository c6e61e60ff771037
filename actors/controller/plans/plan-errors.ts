import { OperatorError } from '../../shared/operator-error';

/** A verb named a plan id the store does not have. */
export class PlanNotFound extends OperatorError {
  readonly id: number;
  constructor(id: number) {
    super('there is no plan with this id', { value: String(id), next: 'list the plans with mesh-control plans (or mesh-control plans --all for ended ones)' });
    this.id = id;
  }
}

/** `plans close` or `plans retry` of a plan that has ended: nothing more is sent under it. */
export class PlanEnded extends OperatorError {
  readonly id: number;
  readonly state: string;
  constructor(id: number, state: string, asked: string, supersededBy: number | null) {
    super(`plan ${id} has ended (${state}); it cannot be ${asked}`, {
      value: String(id),
      next: supersededBy === null
        ? `see what it sent and never sent: mesh-control plans show ${id}; a node left behind is sent by mesh-control push NODE --why TEXT`
        : `plan ${supersededBy} holds its nodes now: mesh-control plans show ${supersededBy}`,
    });
    this.id = id;
    this.state = state;
  }
}

/** `plans retry` of a plan that has not stopped: it is still sending or waiting. */
export class PlanNotStopped extends OperatorError {
  readonly id: number;
  readonly state: string;
  constructor(id: number, state: string) {
    super(`plan ${id} has not stopped (it is ${state}); only a stopped plan is retried`, {
      value: String(id),
      next: `see where it is: mesh-control plans show ${id}; to stop waiting for it, mesh-control plans close ${id}`,
    });
    this.id = id;
    this.state = state;
  }
}

/**
 * A plan's compare-and-set was refused: another writer (a controller under a later epoch, or a
 * copy of this one's) changed it since it was read. This controller stops working the plan and
 * reads it again; nothing it would have written was written.
 */
export class PlanWrittenElsewhere extends OperatorError {
  readonly id: number;
  constructor(id: number, revision: number, epoch: number) {
    super(`plan ${id} was written by another controller since revision ${revision} (this one acts under epoch ${epoch}); it was not written here`, {
      value: String(id),
      next: `read it again: mesh-control plans show ${id}`,
      retryable: true,
    });
    this.id = id;
  }
}
