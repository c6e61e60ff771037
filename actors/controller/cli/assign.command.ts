import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control assign NODE MODULE…`: put modules on a node. */
export class AssignCommand extends ControllerCommand {
  static override paths = [['assign']];
  static override usage = Command.Usage({
    description: 'Put modules on a node, at their newest revision, and send it its declaration',
    details: `
      All or nothing. Refused, with nothing recorded: a module not registered, two modules (or a module and \`node declare\`, or the overlay) declaring the same file path, package, unit or container on the node — both named, with the key — and a node whose adoption briefing has a \`failed\` line, which is a node but is given no work until that is resolved.

      A node that has not reported its overlay applied gets its modules with its full declaration, once it has.
    `,
    examples: [['Put web and db on node alpha', 'mesh-control assign alpha web db']],
  });

  node = Option.String({ name: 'NODE' });
  modules = Option.Rest({ name: 'MODULE', required: 1 });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'assign', { node: this.node, modules: this.modules });
    return { text: answer.text, json: answer.result };
  }
}
