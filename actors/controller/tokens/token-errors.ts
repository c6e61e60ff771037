import { OperatorError } from '../../shared/operator-error';

/** `--ttl` is not a duration a token may have. */
export class TokenTtlInvalid extends OperatorError {
  constructor(value: string, problem: string) {
    super(`a token's time to live ${problem}`, {
      value,
      next: 'give --ttl as a number and a unit between 1m and 7d: 30m, 2h or 1d (the default is 15m)',
    });
  }
}

/** `token issue` was given neither `--new` nor `--node NAME`. */
export class TokenTargetMissing extends OperatorError {
  constructor() {
    super('a token is issued either for a machine the mesh has not seen or for an existing node; neither was named', {
      next: 'run `mesh-control token issue --new` for a new machine, or `mesh-control token issue --node NAME` to enrol a machine again as that node',
    });
  }
}

/** `token issue` was given both `--new` and `--node NAME`. */
export class TokenTargetAmbiguous extends OperatorError {
  constructor(node: string) {
    super('a token is either for a new machine (--new) or for an existing node (--node), not both', {
      value: node,
      next: `drop --new to enrol a machine again as ${node}, or drop --node to let a new machine join`,
    });
  }
}
