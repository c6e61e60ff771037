import { OperatorError } from '../../shared/operator-error';

const INSTALL_NATS = 'install nats-server (apt install nats-server, apk add nats-server or pacman -S nats-server) and try again';

/**
 * The broker already has a key or certificate. It is never replaced quietly: every token
 * carries the certificate's fingerprint and every node pins it.
 */
export class TlsMaterialExists extends OperatorError {
  readonly path: string;
  constructor(path: string) {
    super('the broker already has TLS material here; it is kept because every node pins its certificate', {
      value: path,
      next: 'keep it; to replace it on purpose, move the key and certificate away, run the command again, then issue every node a new token',
    });
    this.path = path;
  }
}

/** No broker certificate where one was expected. */
export class TlsMaterialMissing extends OperatorError {
  readonly path: string;
  constructor(path: string, cause?: unknown) {
    super('there is no broker certificate at this path', { value: path, next: 'create the broker material first: mesh-control init --dir DIR', cause });
    this.path = path;
  }
}

/** A name or address given for the broker's certificate cannot be one. */
export class SubjectAltNameInvalid extends OperatorError {
  constructor(value: string) {
    super('this is neither a host name nor an IP address the broker certificate can name', {
      value,
      next: 'give host names (letters, digits, "-", "_", ".") or IP addresses, e.g. --broker-name mesh.example.net --broker-name 192.0.2.10',
    });
  }
}

/** openssl could not make the broker's certificate. */
export class TlsMaterialFailed extends OperatorError {
  constructor(detail: string) {
    super('the broker certificate could not be made', {
      value: detail,
      next: 'check that openssl is installed (openssl version) and the directory is writable, then run the command again',
    });
  }
}

/** A setting of the broker's configuration cannot be written as given. */
export class BrokerConfigInvalid extends OperatorError {
  constructor(what: string, value: string, next: string) {
    super(what, { value, next });
  }
}

/**
 * A broker user in the list the controller keeps cannot be written: a malformed nkey, node name,
 * token id or password. A password is never quoted back.
 */
export class BrokerUserInvalid extends OperatorError {
  constructor(what: string, value: string | undefined) {
    super(what, {
      ...(value === undefined ? {} : { value }),
      next: 'this is a fault in the controller\'s user list, not in the broker: report it with the command that led here',
    });
  }
}

/** Two entries of the broker's user list are the same user. */
export class BrokerUserDuplicate extends OperatorError {
  constructor(which: string) {
    super('the broker user list names the same user twice', {
      value: which,
      next: 'two records share this name or key: re-enrol one of the nodes (mesh-control token issue --node NAME), then try again',
    });
  }
}

/**
 * A user list without a controller. Written, it would either lock the controller out or, with
 * no users at all, let nats-server accept every connection without credentials.
 */
export class AuthFileWithoutController extends OperatorError {
  constructor() {
    super('the broker user list has no controller user; refusing to write it', {
      next: 'add the controller\'s nkey user to the list before writing it',
    });
  }
}

/** nats-server did not come up accepting TLS connections. */
export class BrokerDidNotStart extends OperatorError {
  /** What the server (or the attempt to start it) said, for callers that retry on some causes. */
  readonly detail: string;
  constructor(detail: string, options: { notInstalled?: boolean; cause?: unknown } = {}) {
    super('the broker (nats-server) did not start', {
      value: detail,
      next: options.notInstalled ? INSTALL_NATS : 'read the broker log named above, fix what it says, then start the broker again',
      cause: options.cause,
      retryable: /address already in use/.test(detail),
    });
    this.detail = detail;
  }

  /** True when another process holds the port: another port, or that process stopped, fixes it. */
  get addressInUse(): boolean {
    return /address already in use/.test(this.detail);
  }
}

/** There is no running broker to signal. */
export class BrokerNotRunning extends OperatorError {
  constructor(detail: string) {
    super('the broker (nats-server) is not running', {
      value: detail,
      next: 'start it (mesh-control broker, or the nats-server service), then try again; its users are already written and apply when it starts',
      retryable: true,
    });
  }
}

/**
 * The broker refused the changed configuration and kept running on the previous one: a user
 * that was meant to be removed can still connect.
 */
export class BrokerReloadFailed extends OperatorError {
  readonly reason: string;
  constructor(reason: string) {
    super('the broker refused its new configuration and is still running on the previous one', {
      value: reason,
      next: 'fix what the broker names above (its log has the same line), then reload again; until then removed users can still connect',
    });
    this.reason = reason;
  }
}

/** The broker was signalled to reload and did not say, in time, that it had. */
export class BrokerReloadUnconfirmed extends OperatorError {
  constructor(logFile: string, seconds: number) {
    super(`the broker was asked to reload and its log did not confirm it within ${seconds} s`, {
      value: logFile,
      next: 'read the end of the broker log; if it shows no reload, restart the broker so it reads its users afresh',
      retryable: true,
    });
  }
}
