import { Command, Option, type CommandClass } from 'clipanion';
import { MeshCommand, type CommandResult } from './mesh-command';
import { OperatorError } from '../operator-error';

/** A verb the project has planned but not built: it says so instead of pretending. */
export class NotBuiltYet extends OperatorError {}

/**
 * Makes a placeholder command for a verb that does not exist yet. It accepts any arguments
 * (so the honest answer is not hidden behind a usage error) and exits 3 saying which part of
 * the project will bring it.
 */
export function notBuiltCommand(path: string[], arrivesWith: string): CommandClass {
  return class extends MeshCommand {
    static override paths = [path];
    static override usage = Command.Usage({ description: `(not built yet: arrives with ${arrivesWith})` });
    rest = Option.Proxy();
    async run(): Promise<CommandResult> {
      throw new NotBuiltYet(`\`${path.join(' ')}\` is not built yet`, {
        next: `it arrives with ${arrivesWith}; see the README for what works today`,
        exitCode: 3,
      });
    }
  };
}
