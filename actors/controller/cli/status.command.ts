import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control status`: the acting controller's last composition of the mesh. */
export class StatusCommand extends ControllerCommand {
  static override paths = [['status']];
  static override usage = Command.Usage({
    description: 'Show the mesh as the acting controller last composed it: the lease, nodes by state, refused reports and open problems',
    details: `
      Answers at once from the last composition, saying when it was composed and how long that took. The controller composes it when it starts, after news from a node, after an acting verb, and every minute.
    `,
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'status', {});
    return { text: answer.text, json: answer.result };
  }
}
