import { OperatorError } from '../../shared/operator-error';

/** A second holder of a seat that is not replicated, by hand or through a module at assign. */
export class SeatTaken extends OperatorError {
  readonly seat: string;
  readonly holder: string;
  constructor(seat: string, holder: string, node: string, refused: string) {
    super(`seat ${seat} is held by node ${holder} and is not replicated, so node ${node} cannot hold it too; ${refused}`, {
      value: node,
      next: `to move it: mesh-control seat ${seat} --remove ${holder}, then add ${node}; if several machines should hold it: mesh-control seat ${seat} --replicated`,
    });
    this.seat = seat;
    this.holder = holder;
  }
}

/** Taking the last holder away from a seat something still needs. */
export class SeatStillNeeded extends OperatorError {
  readonly seat: string;
  readonly needs: ReadonlyArray<{ module: string; node: string }>;
  constructor(seat: string, node: string, needs: ReadonlyArray<{ module: string; node: string }>, refused: string) {
    const named = needs.map((need) => `module ${need.module} on node ${need.node}`).join(', ');
    super(`node ${node} is the last holder of seat ${seat}, which ${named} still need${needs.length === 1 ? 's' : ''}; ${refused}`, {
      value: seat,
      next: `add another holder first (mesh-control seat ${seat} --add NODE), or unassign what needs it (mesh-control unassign NODE MODULE)`,
    });
    this.seat = seat;
    this.needs = needs;
  }
}

/** `node release` of the last holder on the mesh of a seat something still needs, without --force. */
export class SeatHolderLeaving extends OperatorError {
  readonly seats: ReadonlyArray<{ seat: string; needed_by: ReadonlyArray<{ module: string; node: string }> }>;
  constructor(node: string, seats: ReadonlyArray<{ seat: string; needed_by: ReadonlyArray<{ module: string; node: string }> }>) {
    const named = seats.map((entry) => `seat ${entry.seat}, which ${entry.needed_by.map((need) => `module ${need.module} on node ${need.node}`).join(', ')} still need${entry.needed_by.length === 1 ? 's' : ''}`).join('; ');
    const first = seats[0]?.seat ?? 'NAME';
    super(`node ${node} is the last holder on the mesh of ${named}; it was not released and nothing was sent`, {
      value: node,
      next: `add another holder first (mesh-control seat ${first} --add NODE), or unassign what needs it; to release it anyway, leaving the seat without a holder: mesh-control node release ${node} --force`,
    });
    this.seats = seats;
  }
}

/** A module needs a seat nobody holds, at assign or when a new revision of one that runs says so. */
export class SeatNotHeld extends OperatorError {
  readonly seat: string;
  constructor(seat: string, module: string, refused: string) {
    super(`module ${module} needs seat ${seat}, which no node holds; ${refused}`, {
      value: seat,
      next: `give it a holder first: mesh-control seat ${seat} --add NODE (or assign a module that holds it), then try again`,
    });
    this.seat = seat;
  }
}

/** `seat --remove` of a node that does not hold the seat by hand. */
export class SeatHolderNotFound extends OperatorError {
  constructor(seat: string, node: string, holders: readonly string[]) {
    super(`node ${node} does not hold seat ${seat} by hand; nothing was changed`, {
      value: node,
      next: holders.length === 0 ? `seat ${seat} has no holder; list seats with mesh-control seats` : `its holders: ${holders.join(', ')} (mesh-control seats says how each holds it)`,
    });
  }
}

/** `seat --remove` of a node that holds the seat through a module as well. */
export class SeatHeldThroughModule extends OperatorError {
  constructor(seat: string, node: string, modules: readonly string[]) {
    super(`node ${node} holds seat ${seat} through module ${modules.join(', ')} as well; its holding by hand was kept and nothing was changed`, {
      value: node,
      next: `take ${modules.length === 1 ? 'the module' : 'the modules'} off it: mesh-control unassign ${node} ${modules.join(' ')}`,
    });
  }
}

/** `seat --single` while several nodes hold the seat. */
export class SeatHeldBySeveral extends OperatorError {
  constructor(seat: string, holders: readonly string[]) {
    super(`seat ${seat} is held by ${holders.join(', ')}; a single seat has one holder, so it was left replicated`, {
      value: seat,
      next: `remove all but one first: mesh-control seat ${seat} --remove NODE`,
    });
  }
}

/** `seat` was asked nothing to do, or two things that contradict. */
export class SeatChangeUnclear extends OperatorError {
  constructor(seat: string, why: string) {
    super(`${why}; nothing was changed`, {
      value: seat,
      next: `say one change: mesh-control seat ${seat} --add NODE, --remove NODE, --replicated or --single (list seats with mesh-control seats)`,
      exitCode: 2,
    });
  }
}
