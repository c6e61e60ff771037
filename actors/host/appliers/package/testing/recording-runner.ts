import type { CommandRunner, RunOptions, RunResult } from '../../../../shared/process/command-runner';

/**
 * A fake runner that runs nothing: it records each command and its options and answers
 * success. For asserting what a backend would run on the machine itself (root `/`), where
 * running it for real would change the machine the tests run on.
 */
export class RecordingRunner implements CommandRunner {
  readonly calls: Array<{ argv: string[]; options: RunOptions }> = [];

  async run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv: [...argv], options });
    return { argv, code: 0, signal: null, stdout: '', stderr: '', timedOut: false, durationMs: 0 };
  }
}
