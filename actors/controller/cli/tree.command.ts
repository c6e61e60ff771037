import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control tree`: the acting controller's live supervision tree. */
export class TreeCommand extends ControllerCommand {
  static override paths = [['tree']];
  static override usage = Command.Usage({
    description: 'Show the acting controller\'s supervision tree: each actor, its state, and its restarts and last error',
    details: `
      A child that failed shows how many times it was restarted lately and its last error; one that keeps failing (more than three times a minute) stops the controller, which exits naming it.
    `,
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'tree', {});
    return { text: answer.text, json: answer.result };
  }
}
