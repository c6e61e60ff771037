import { OperatorError } from '../operator-error';

const COPY_AGAIN = 'copy the token again from the `mesh-control token issue` output (or issue a new one) and run nox-mesh-host enrol --token … with it';

/**
 * The token does not check out: a character was changed in copying, or is not one a token
 * uses. Never quotes the token, which carries the secret.
 */
export class TokenMistyped extends OperatorError {
  /** 1-based position of a character no token uses, when that is the fault. */
  readonly position: number | undefined;
  constructor(details: { character: string; position: number } | { checksum: true }) {
    if ('character' in details) {
      super(`the token has a character that no token uses at position ${details.position}`, { value: details.character, next: COPY_AGAIN });
      this.position = details.position;
    } else {
      super('the token does not check out: a character was mistyped or changed on the way (its checksum does not match)', { next: COPY_AGAIN });
      this.position = undefined;
    }
  }
}

/**
 * The text is not a token this host can read: another prefix, a version it does not know, cut
 * short, or with something added. Says what was expected; never quotes the token.
 */
export class TokenMalformed extends OperatorError {
  constructor(problem: string, next = COPY_AGAIN) {
    super(`this is not a whole enrolment token: ${problem}`, { next });
  }
}
