import type { Writable } from 'node:stream';
import { isOperatorError } from '../operator-error';
import { EXIT } from './exit-status';

/** Where a failure is said, and how. */
export interface FailureOutput {
  stdout: Pick<Writable, 'write'>;
  stderr: Pick<Writable, 'write'>;
  /** Under `--json`: the failure is also one JSON document, on one line, on stdout. */
  json: boolean;
  /** The program's name, for the next step of a usage error. */
  binaryName: string;
  /** The text clipanion gives a usage error (the message and the verb's usage), plain. */
  usageText?: (error: Error) => string;
}

/** The document a failure is under `--json`, the same shape as an OperatorError's. */
export interface FailureDocument {
  error: { condition: string; what: string; value?: string; next: string; retryable: boolean };
}

/**
 * Says a failure and returns the exit status. The text goes to stderr always; under `--json`
 * stdout gets one JSON document on one line (a program reading `run --json` line by line reads
 * it like any other line). An OperatorError is the operator's to act on: two lines, no stack,
 * its own status. A usage error (clipanion's: an unknown verb or option, a missing value) exits 2
 * with the usage. Anything else is a bug: it keeps its stack on stderr and exits 1.
 */
export function reportFailure(error: unknown, out: FailureOutput): number {
  const { document, text, status } = describe(error, out);
  out.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  if (out.json) out.stdout.write(`${JSON.stringify(document)}\n`);
  return status;
}

/** True for clipanion's usage errors, which carry `clipanion.type === 'usage'` (or `none`, for syntax errors). */
export function isUsageError(error: unknown): error is Error & { clipanion: { type: string } } {
  return error instanceof Error && typeof (error as { clipanion?: unknown }).clipanion === 'object';
}

function describe(error: unknown, out: FailureOutput): { document: FailureDocument; text: string; status: number } {
  if (isOperatorError(error)) return { document: error.toJSON(), text: error.toText(), status: error.exitCode };
  if (isUsageError(error)) {
    const next = `see \`${out.binaryName} --help\` (or \`${out.binaryName} <verb> --help\`); nothing was done`;
    const usage = out.usageText?.(error) ?? `${error.name}: ${error.message}\n`;
    return {
      document: { error: { condition: 'UsageError', what: error.message, next, retryable: false } },
      text: usage,
      status: EXIT.usage,
    };
  }
  const bug = error instanceof Error ? error : new Error(`a non-error was thrown: ${String(error)}`);
  const next = `this is a fault in ${out.binaryName}, not in what was asked: report it with the text on stderr`;
  return {
    document: { error: { condition: 'InternalError', what: bug.message, next, retryable: false } },
    text: `internal error: ${bug.stack ?? bug.message}\nnext:  ${next}\n`,
    status: EXIT.failed,
  };
}
