import { OperatorError } from '../operator-error';

/**
 * The broker presented a certificate whose SHA-256 fingerprint is not the pinned one. Nothing
 * was sent to it: the check runs before the NATS CONNECT that carries credentials.
 *
 * Retryable: a network that intercepts TLS (a hotel portal, a proxy) goes away when the machine
 * moves, so a running host keeps trying. A broker whose certificate was replaced on purpose
 * never matches again, and the message says that re-enrolment is the cure.
 */
export class FingerprintMismatch extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;
  /** The pinned fingerprint (the first, when two are pinned during a rotation), lower-case hex. */
  readonly expected: string;
  /** Every fingerprint pinned: one, or the current and the next during a rotation. */
  readonly pinned: readonly string[];
  /** The fingerprint of the certificate presented, or undefined when it could not be read. */
  readonly found: string | undefined;

  constructor(url: string, expected: string | readonly string[], found: string | undefined, cause?: unknown) {
    const pinned = typeof expected === 'string' ? [expected] : [...expected];
    super(
      `the broker's certificate does not match the pinned fingerprint (expected sha256 ${pinned.join(' or sha256 ')}, found ${found === undefined ? 'a certificate that could not be read' : `sha256 ${found}`}); nothing was sent to it`,
      {
        value: url,
        next: `the broker at ${url} is not the one this token/host pinned; if the mesh's broker certificate was replaced on purpose, re-enrol with a new token (nox-mesh-host enrol --token …); otherwise something is intercepting the connection`,
        retryable: true,
        cause,
      },
    );
    this.url = url;
    this.expected = pinned[0] ?? '';
    this.pinned = pinned;
    this.found = found;
  }
}

/** The broker could not be reached: refused, timed out, no route, name not found, or cut off. */
export class BrokerUnreachable extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;
  /** Why, in a few words ("connection refused", "no answer within 5000 ms"). */
  readonly reason: string;

  constructor(url: string, reason: string, cause?: unknown) {
    super(`the broker could not be reached (${reason})`, {
      value: url,
      next: `check this machine's network and that nats-server is running and listening at ${url}; a running host keeps trying on its own`,
      retryable: true,
      cause,
    });
    this.url = url;
    this.reason = reason;
  }
}

/** Something answered at the broker's address, but not a NATS server's greeting. */
export class BrokerNotNats extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;

  constructor(url: string, said: string) {
    super(`the server at ${url} did not greet like a NATS server; it said`, {
      value: said,
      next: "check the broker address: it must be nats-server's client port (4222 unless the mesh chose another), not its monitoring or cluster port",
    });
    this.url = url;
  }
}

/** The broker offers no TLS, so there is no certificate to check the pin against. */
export class BrokerWithoutTls extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;

  constructor(url: string) {
    super('the broker does not offer TLS, so its certificate cannot be checked against the pinned fingerprint; nothing was sent to it', {
      value: url,
      next: "give nats-server a tls { cert_file, key_file } block with the certificate the mesh pinned, then reload it (nats-server --signal reload)",
    });
    this.url = url;
  }
}

/**
 * The pinned certificate was presented, but the TLS stack refused it as out of date: expired,
 * or not yet valid by this machine's clock. Retryable because a clock that is wrong at boot is
 * usually put right by NTP.
 */
export class BrokerCertificateOutOfDate extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;

  constructor(url: string, validFrom: string, validTo: string, cause?: unknown) {
    super(`the broker's pinned certificate is valid from ${validFrom} to ${validTo}, which does not include this machine's time`, {
      value: url,
      next: "check this machine's clock (date -u; timedatectl); if the clock is right the broker certificate has expired: give the broker a new one and re-enrol each node with a new token (nox-mesh-host enrol --token …)",
      retryable: true,
      cause,
    });
    this.url = url;
  }
}

/** The broker took the TLS connection but refused the credentials sent with CONNECT. */
export class BrokerRefusedCredentials extends OperatorError {
  /** The broker address dialled. */
  readonly url: string;

  constructor(url: string, cause?: unknown) {
    super('the broker refused the credentials this machine presented', {
      value: url,
      next: 'if the node was released, or the token was already used or has expired, issue a new token (mesh-control token issue) and enrol again (nox-mesh-host enrol --token …)',
      cause,
    });
    this.url = url;
  }
}

/** A broker address that cannot be dialled: not `tls://host[:port]`. */
export class BrokerAddressInvalid extends OperatorError {
  constructor(url: string, cause?: unknown) {
    super('expected a broker address like tls://mesh.example:4222, with no credentials or path; got', {
      value: url,
      next: 'check the address in the token or in state.json (pins.broker_url)',
      cause,
    });
  }
}
