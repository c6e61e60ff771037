import { Command, Option } from 'clipanion';
import { isOperatorError } from '../operator-error';

/**
 * The base of every verb on both CLIs. A verb implements `run()` and returns what it has to
 * say as a value; the base prints it as text or, under `--json`, as one JSON document, and
 * turns an OperatorError into two plain lines (or a JSON error) and a non-zero exit, with no
 * stack trace. Anything else is a bug and keeps its stack.
 */
export abstract class MeshCommand extends Command {
  json = Option.Boolean('--json', false, { description: 'Print one JSON document instead of text' });

  /** Does the work; returns the result to print. */
  abstract run(): Promise<CommandResult>;

  async execute(): Promise<number> {
    try {
      const result = await this.run();
      if (this.json) this.context.stdout.write(`${JSON.stringify(result.json, null, 2)}\n`);
      else if (result.text !== '') this.context.stdout.write(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
      return result.exitCode ?? 0;
    } catch (error) {
      if (!isOperatorError(error)) throw error;
      if (this.json) this.context.stdout.write(`${JSON.stringify(error.toJSON(), null, 2)}\n`);
      else this.context.stderr.write(error.toText());
      return error.exitCode;
    }
  }
}

/** What a verb has to say: the same facts as text for a person and as JSON for a program. */
export interface CommandResult {
  text: string;
  json: unknown;
  exitCode?: number;
}
