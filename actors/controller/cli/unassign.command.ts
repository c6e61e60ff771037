import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control unassign NODE MODULE…`: take modules off a node. */
export class UnassignCommand extends ControllerCommand {
  static override paths = [['unassign']];
  static override usage = Command.Usage({
    description: 'Take modules off a node, and send it its declaration without them',
    details: `
      The node removes what they declared: files, directories and containers removed, services stopped (unit files kept), packages and actions forgotten. All or nothing: a module the node does not run is refused and nothing is taken off.
    `,
    examples: [['Take web off node alpha', 'mesh-control unassign alpha web']],
  });

  node = Option.String({ name: 'NODE' });
  modules = Option.Rest({ name: 'MODULE', required: 1 });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'unassign', { node: this.node, modules: this.modules });
    return { text: answer.text, json: answer.result };
  }
}
