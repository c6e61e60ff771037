import type { EnrolRefusal } from '../../../schema/enrolment';
import { OperatorError } from '../../shared/operator-error';

const NEW_TOKEN = 'issue a new token (mesh-control token issue --node NAME to enrol this machine as a node the mesh knows, or --new) and run nox-mesh-host enrol --token … with it';

/**
 * The controller refused the enrolment and said why. The controller's own words are shown (it
 * knows what it checked); the token id is quoted, the secret never. One subclass per refusal,
 * so a caller can tell them apart without reading the text.
 */
export abstract class EnrolmentRefused extends OperatorError {
  /** The refusal as the controller named it. */
  abstract readonly refusal: EnrolRefusal;
  constructor(message: string, next: string, tokenId: string, retryable = false) {
    super(`the controller refused the enrolment: ${message}; token`, { value: tokenId, next, retryable });
  }
}

/** No such token: mistyped id, or issued by another controller. */
export class TokenUnknown extends EnrolmentRefused {
  readonly refusal = 'token_unknown';
}
/** The token was issued but not used in time. */
export class TokenExpired extends EnrolmentRefused {
  readonly refusal = 'token_expired';
}
/** The token was already used: a token enrols one machine once. */
export class TokenUsed extends EnrolmentRefused {
  readonly refusal = 'token_used';
}
/** The token's id exists but its secret does not match. */
export class TokenSecretWrong extends EnrolmentRefused {
  readonly refusal = 'token_secret_wrong';
}
/** The controller could not verify the request's proof of the new identity. */
export class EnrolProofRefused extends EnrolmentRefused {
  readonly refusal = 'proof_invalid';
}
/** The controller found the request outside the enrolment contract. */
export class EnrolRequestRefused extends EnrolmentRefused {
  readonly refusal = 'malformed';
}
/** The controller could not finish (its store or the broker); trying again may work. */
export class ControllerUnavailable extends EnrolmentRefused {
  readonly refusal = 'unavailable';
}

const REFUSALS: Record<EnrolRefusal, new (message: string, next: string, tokenId: string, retryable?: boolean) => EnrolmentRefused> = {
  token_unknown: TokenUnknown,
  token_expired: TokenExpired,
  token_used: TokenUsed,
  token_secret_wrong: TokenSecretWrong,
  proof_invalid: EnrolProofRefused,
  malformed: EnrolRequestRefused,
  unavailable: ControllerUnavailable,
};

/** The error for a refusal the controller sent. */
export function enrolmentRefused(reply: { refusal: EnrolRefusal; message: string; next: string }, tokenId: string): EnrolmentRefused {
  const Refusal = REFUSALS[reply.refusal];
  return new Refusal(reply.message, reply.next, tokenId, reply.refusal === 'unavailable');
}

/**
 * The broker refused the token's one-time user. The controller removes that user when the
 * token is used or expires, so this is what a used or expired token looks like from here.
 */
export class TokenNotAccepted extends OperatorError {
  constructor(tokenId: string, cause?: unknown) {
    super('the broker did not accept this token: it has been used or has expired; token', { value: tokenId, next: NEW_TOKEN, cause });
  }
}

/** Nobody answered the enrolment request: no controller is serving, or it did not answer in time. */
export class EnrolmentUnanswered extends OperatorError {
  constructor(tokenId: string, why: string, cause?: unknown) {
    super(`no controller answered the enrolment request (${why}); token`, {
      value: tokenId,
      next: 'check that the controller is running (mesh-control serve) and reaches the broker, then run the same enrol command again: this machine presents the same keys, so if the first request got through, the controller answers it again',
      retryable: true,
      cause,
    });
  }
}

/** The answer on the enrolment inbox is not an enrolment reply. */
export class EnrolReplyMalformed extends OperatorError {
  constructor(problem: string, cause?: unknown) {
    super(`the controller's answer to the enrolment is not an enrolment reply (${problem}); nothing was stored`, {
      next: 'compare the versions (mesh-control version, nox-mesh-host version) and upgrade the older one, then enrol with a new token',
      cause,
    });
  }
}

/**
 * The state directory's path cannot go into the WireGuard configuration's PostUp line, which
 * wg-quick runs through a shell as root: refused before anything is sent.
 */
export class StateDirUnfitForOverlay extends OperatorError {
  constructor(keyPath: string, problem: string) {
    super(`the WireGuard key's path in this host's state directory cannot be named in the overlay's configuration (${problem}); path`, {
      value: keyPath,
      next: 'run the host with a --state-dir (or --root) whose path has no quote (\'), "#", "%" or control character, then enrol again',
    });
  }
}
