import { OperatorError } from '../../shared/operator-error';

/** A verb that is a hand act and must say why was called without `--why`. */
export class HandActWhyMissing extends OperatorError {
  readonly verb: string;
  constructor(verb: string, example: string) {
    super(`\`${verb}\` is a hand act and is kept with its reason: --why is required; nothing was done`, {
      next: `say in a line why you do it by hand, e.g. ${example}`,
    });
    this.verb = verb;
  }
}

/** `--why` given, but not one line of at most HAND_ACT_WHY_MAX characters. */
export class HandActWhyInvalid extends OperatorError {
  constructor(given: string, max: number) {
    super(`--why must be one line of 1 to ${max} characters; nothing was done`, {
      value: given,
      next: 'say why in a single line, e.g. --why "consumer deleted by hand during the broker upgrade"',
    });
  }
}

/** `--condition` given, but not the form of a condition's id. */
export class HandActConditionInvalid extends OperatorError {
  constructor(given: string) {
    super('--condition must be a condition\'s id (letters, digits, and . _ : - after the first, at most 128); nothing was done', {
      value: given,
      next: 'copy the id from mesh-control conditions, or leave out --condition',
    });
  }
}

/** `--since` is not a duration the listing can read. */
export class SinceInvalid extends OperatorError {
  constructor(given: string, problem: string, max: string) {
    super(`--since ${problem}`, {
      value: given,
      next: `give a whole number and one unit, from 1m to ${max}: --since 30m, --since 6h, --since 7d`,
    });
  }
}
