import { Command, Option } from 'clipanion';
import { reportFailure } from './report-failure';

/**
 * The base of every verb on both CLIs. A verb implements `run()` and returns what it has to
 * say as a value; the base prints it as text or, under `--json`, as one JSON document. Every
 * failure, from the verb or from checking its options, is said by {@link reportFailure}: text
 * on stderr (an OperatorError as two plain lines with no stack trace; anything else is a bug
 * and keeps its stack) and, under `--json`, one JSON document on stdout, never a mix of the two.
 */
export abstract class MeshCommand extends Command {
  json = Option.Boolean('--json', false, { description: 'Print one JSON document instead of text (a failure too: the document is its error)' });

  /** Does the work; returns the result to print. */
  abstract run(): Promise<CommandResult>;

  /**
   * Whether the JSON result is one line (a verb whose output under `--json` is a stream of
   * lines, one object each: `run`) rather than one indented document.
   */
  protected jsonLines(): boolean {
    return false;
  }

  async execute(): Promise<number> {
    try {
      const result = await this.run();
      if (this.json) this.context.stdout.write(`${JSON.stringify(result.json, null, this.jsonLines() ? undefined : 2)}\n`);
      else if (result.text !== '') this.context.stdout.write(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
      return result.exitCode ?? 0;
    } catch (error) {
      return this.failed(error);
    }
  }

  /** Checks the options (a usage error exits 2), then executes; no failure escapes to clipanion, which would print it on stdout. */
  override async validateAndExecute(): Promise<number> {
    try {
      return await super.validateAndExecute();
    } catch (error) {
      return this.failed(error);
    }
  }

  private failed(error: unknown): number {
    const cli = this.cli as Command['cli'] | undefined;
    return reportFailure(error, {
      stdout: this.context.stdout,
      stderr: this.context.stderr,
      json: this.json,
      binaryName: cli?.binaryName ?? 'this command',
      ...(cli === undefined ? {} : { usageText: (usage: Error) => cli.error(usage, { command: this }) }),
    });
  }
}

/** What a verb has to say: the same facts as text for a person and as JSON for a program. */
export interface CommandResult {
  text: string;
  json: unknown;
  exitCode?: number;
}
