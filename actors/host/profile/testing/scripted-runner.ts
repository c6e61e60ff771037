import type { CommandRunner, RunOptions, RunResult } from '../../../shared/process/command-runner';

/** How the fake answers one command: its output and exit status, or that it could not start. */
export interface ScriptedAnswer {
  code?: number;
  stdout?: string;
  stderr?: string;
  spawnError?: string;
}

/**
 * A FAKE runner for the listings a booted machine answers (systemctl, rc-status, docker,
 * podman), which cannot run here. Answers are keyed by the whole command line, words joined by
 * a space; a command with no answer behaves as a program that is not installed. Every command
 * asked is recorded in `calls`, with its options in `options`.
 */
export class ScriptedRunner implements CommandRunner {
  /** Every command asked, in order. */
  readonly calls: string[][] = [];
  /** The options each command was asked with, in the same order. */
  readonly options: RunOptions[] = [];

  constructor(private readonly answers: Record<string, ScriptedAnswer> = {}) {}

  async run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push([...argv]);
    this.options.push(options);
    const answer = this.answers[argv.join(' ')];
    if (answer === undefined) {
      return { argv, code: null, signal: null, stdout: '', stderr: '', timedOut: false, spawnError: `spawn ${argv[0]} ENOENT`, durationMs: 0 };
    }
    return {
      argv,
      code: answer.spawnError === undefined ? answer.code ?? 0 : null,
      signal: null,
      stdout: answer.stdout ?? '',
      stderr: answer.stderr ?? '',
      timedOut: false,
      ...(answer.spawnError === undefined ? {} : { spawnError: answer.spawnError }),
      durationMs: 0,
    };
  }
}
