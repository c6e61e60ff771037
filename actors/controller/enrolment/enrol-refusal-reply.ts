import type { EnrolRefusal, EnrolReply } from '../../../schema/enrolment';

const ISSUE_ANOTHER = 'ask the mesh\'s operator for another token: mesh-control token issue --new (or --node NAME to enrol as an existing node)';

const WORDING: Readonly<Record<EnrolRefusal, { message: string; next: string }>> = {
  token_unknown: {
    message: 'the controller has no token with this id',
    next: `check that the whole token was copied; if it was, ${ISSUE_ANOTHER}`,
  },
  token_expired: {
    message: 'the token expired before it was used',
    next: ISSUE_ANOTHER,
  },
  token_used: {
    message: 'the token was already used: a token enrols one machine, once',
    next: ISSUE_ANOTHER,
  },
  token_secret_wrong: {
    message: 'the token\'s secret does not match the token issued under its id',
    next: `copy the token again from where it was printed; if it still fails, ${ISSUE_ANOTHER}`,
  },
  proof_invalid: {
    message: 'the enrolment request is not signed by the identity key it presents',
    next: 'enrol again with the same token (nothing was used); if it fails again, the request is being altered on the way or the host is broken: reinstall nox-mesh-host',
  },
  malformed: {
    message: 'the controller could not use the enrolment request',
    next: 'use a nox-mesh-host of the same version as the controller (mesh-control --version), then enrol again with the same token',
  },
  unavailable: {
    message: 'the controller could not finish the enrolment',
    next: 'enrol again with the same token in a minute; if it keeps failing, the operator should read the controller\'s log',
  },
};

/**
 * The answer to a refused enrolment, for the person at the machine: what happened (with the
 * particular `detail`, never a secret) and what to do next.
 */
export function enrolRefusalReply(refusal: EnrolRefusal, detail?: string): EnrolReply {
  const wording = WORDING[refusal];
  const message = detail === undefined ? wording.message : `${wording.message} (${detail})`;
  return { ok: false, refusal, message: message.slice(0, 1024), next: wording.next };
}
