import { OperatorError } from '../../shared/operator-error';
import { bytesText } from '../../../schema/bounds';
import { shellWord } from '../config/shell-word';

const SAME_VERSION = 'check that the CLI and the serving controller are the same version (mesh-control --version on both sides)';

/** A control call named a verb the serving controller does not answer. */
export class VerbUnknown extends OperatorError {
  readonly verb: string;
  constructor(verb: string, known: readonly string[]) {
    super('the serving controller does not answer this verb', {
      value: verb,
      next: `it answers ${known.length === 0 ? 'no verbs yet' : known.join(', ')}; ${SAME_VERSION}`,
    });
    this.verb = verb;
  }
}

/**
 * A control call carried an argument its verb does not declare. Refused rather than ignored, so
 * a mistyped or stale option never does something other than what the person asked.
 */
export class ArgumentNotDeclared extends OperatorError {
  readonly verb: string;
  readonly argument: string;
  constructor(verb: string, argument: string, declared: readonly string[]) {
    super(`\`${verb}\` does not take the argument \`${argument}\`; nothing was done`, {
      value: argument,
      next: `${verb} takes ${declared.length === 0 ? 'no arguments' : declared.map((name) => `\`${name}\``).join(', ')}; ${SAME_VERSION}`,
    });
    this.verb = verb;
    this.argument = argument;
  }
}

/** A declared argument of a control call has a value its verb cannot use. */
export class ArgumentInvalid extends OperatorError {
  readonly verb: string;
  readonly argument: string;
  constructor(verb: string, argument: string, problem: string, value: string | undefined) {
    super(`\`${verb}\` argument \`${argument}\`: ${problem}; nothing was done`, {
      ...(value === undefined ? {} : { value }),
      next: `give ${argument} a value of the kind named above (mesh-control --help lists every option)`,
    });
    this.verb = verb;
    this.argument = argument;
  }
}

/** A message on a control subject that is not a control request. */
export class ControlRequestMalformed extends OperatorError {
  constructor(problem: string) {
    super(`the controller could not read the control request: ${problem}`, { next: SAME_VERSION });
  }
}

/** A verb failed in a way that is not an operator's condition: a fault, logged in full by the controller. */
export class ControllerFault extends OperatorError {
  constructor(verb: string, message: string) {
    super(`the controller failed while answering \`${verb}\`: ${message}`, {
      next: 'read the controller\'s log (the standard error of mesh-control serve) for the whole fault, then try again',
      retryable: true,
    });
  }
}

/**
 * Nothing on the broker answers control calls: no controller is serving. Either none runs, or
 * the one that held the lease has just stopped and a standby has not taken it yet (a standby
 * answers once the lease is given back, or once it expires after a kill).
 */
export class ControllerNotRunning extends OperatorError {
  readonly url: string;
  constructor(url: string, dir: string) {
    super(`no controller answered on the broker at ${url}`, {
      next: `start it with \`mesh-control serve --dir ${shellWord(dir)}\`; if one was stopped or killed just now, a standby takes over within about 20 s (the lease lasts 15 s): try again then`,
      retryable: true,
    });
    this.url = url;
  }
}

/**
 * No answer came in time: a controller took the call and is slow or stuck, or one stopped while
 * it worked (with none serving at all the broker says so at once: ControllerNotRunning). The
 * next step covers both, since the call may still have been done.
 */
export class ControllerDidNotAnswer extends OperatorError {
  constructor(verb: string, timeoutMs: number, dir: string) {
    super(`no controller answered \`${verb}\` within ${Math.round(timeoutMs / 100) / 10} s`, {
      next: `if none is serving, start it with \`mesh-control serve --dir ${shellWord(dir)}\` (if one was stopped or killed just now, a standby takes over within about 20 s); if one is, the call may still have been done: check with the listing verb (mesh-control nodes) and read the controller's log before trying again`,
      retryable: true,
    });
  }
}

/** The broker the CLI calls the controller through could not be reached. */
export class ControlBrokerUnreachable extends OperatorError {
  readonly url: string;
  constructor(url: string, reason: string, dir: string, cause?: unknown) {
    super(`the broker could not be reached (${reason})`, {
      value: url,
      next: `start it with \`mesh-control broker --dir ${shellWord(dir)}\` (or the nats-server service), then the controller with \`mesh-control serve --dir ${shellWord(dir)}\``,
      retryable: true,
      cause,
    });
    this.url = url;
  }
}

/** The controller's answer is not a control reply. */
export class ControlReplyMalformed extends OperatorError {
  constructor(verb: string, problem: string) {
    super(`the controller's answer to \`${verb}\` could not be read: ${problem}`, { next: SAME_VERSION });
  }
}

/**
 * The serving controller refused a call with an operator error of its own. The condition keeps
 * the controller's class name (`NodeNotFound`, `TokenTtlInvalid`…), so `--json` shows the same
 * condition as if the verb had run in this process.
 */
export class ControllerRefused extends OperatorError {
  readonly condition: string;
  constructor(error: { condition: string; what: string; value?: string; next: string; retryable: boolean }) {
    super(error.what, { ...(error.value === undefined ? {} : { value: error.value }), next: error.next, retryable: error.retryable });
    this.name = error.condition;
    this.condition = error.condition;
  }
}

/**
 * A control call larger than the broker carries in one message (its max_payload): refused
 * before it is sent, since the client library would only fail with a bare protocol error.
 */
export class ControlRequestTooLarge extends OperatorError {
  constructor(verb: string, bytes: number, maxPayload: number) {
    super(`the \`${verb}\` request is ${bytesText(bytes)}, over the ${bytesText(maxPayload)} the broker carries in one message (its max_payload)`, {
      next: 'declare less at once (split the resources into modules: mesh-control module add), or raise max_payload in the broker configuration and restart the broker',
    });
  }
}
