/**
 * The one convention for errors a person has to act on: what happened, the value that caused
 * it, and the next step. Printed without a stack trace; the process exits non-zero.
 *
 * Subclass it once per condition (`TokenExpired`, `FingerprintMismatch`, …) so callers can
 * tell conditions apart with `instanceof` and tests can assert the condition, not the wording.
 *
 * It lives in schema/ because it is part of the contracts: its JSON form is the `error` of a
 * control call's answer (schema/control-call), and a value that breaks a contract is refused
 * with one (ContractViolation, schema/parse). Actors import it from actors/shared/operator-error.
 */
export class OperatorError extends Error {
  /** What happened, in a sentence a person at the machine understands. */
  readonly what: string;
  /** The offending value, quoted back (never key material or a token secret). */
  readonly value: string | undefined;
  /** The next step: a command to run or a thing to check. */
  readonly next: string;
  /** Exit status for the CLI. 1 unless a condition needs its own. */
  readonly exitCode: number;
  /** True when trying again later may succeed (a broker away, a lock held). */
  readonly retryable: boolean;

  constructor(
    what: string,
    details: { value?: string; next: string; cause?: unknown; exitCode?: number; retryable?: boolean },
  ) {
    super(formatMessage(what, details.value), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.what = what;
    this.value = details.value;
    this.next = details.next;
    this.exitCode = details.exitCode ?? 1;
    this.retryable = details.retryable ?? false;
  }

  /** The text a person reads: two lines, no stack. */
  toText(): string {
    return `error: ${this.message}\nnext:  ${this.next}\n`;
  }

  /** The shape printed under `--json`. */
  toJSON(): { error: { condition: string; what: string; value?: string; next: string; retryable: boolean } } {
    return {
      error: {
        condition: this.name,
        what: this.what,
        ...(this.value === undefined ? {} : { value: this.value }),
        next: this.next,
        retryable: this.retryable,
      },
    };
  }
}

function formatMessage(what: string, value: string | undefined): string {
  return value === undefined ? what : `${what}: ${quote(value)}`;
}

/** Quotes a value for a message, shortened so a pasted blob cannot flood the terminal. */
export function quote(value: string, max = 120): string {
  const shown = value.length > max ? `${value.slice(0, max)}… (${value.length} characters)` : value;
  return JSON.stringify(shown);
}

/** True for errors that are an operator's to act on, from this or another copy of the module. */
export function isOperatorError(error: unknown): error is OperatorError {
  return error instanceof OperatorError;
}
