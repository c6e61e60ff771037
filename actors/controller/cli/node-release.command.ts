import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control node release NAME`: retire a node gracefully. */
export class NodeReleaseCommand extends ControllerCommand {
  static override paths = [['node', 'release']];
  static override usage = Command.Usage({
    description: 'Retire a node: send it a final declaration naming nothing',
    details: `
      The node removes what the mesh made on it (files, directories and containers removed, services stopped, packages and actions forgotten), reports, and drops its identity; the machine keeps nox-mesh-host and is back to hosted. When that report says nothing failed, the controller removes the node's broker user and its queue, gives its overlay address back, and \`mesh-control nodes\` shows it released.

      A node that is away gets the final declaration when it comes back. A node whose identity was revoked (a re-enrolment token was issued and never used) is released at once.
    `,
    examples: [['Retire node workstation', 'mesh-control node release workstation']],
  });

  node = Option.String({ name: 'NAME' });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'node.release', { node: this.node });
    return { text: answer.text, json: answer.result };
  }
}
