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

      Refused, with nothing sent, when the node is the last holder on the mesh of a seat a module on another node still needs: the error names the seat and what needs it. Add another holder first (\`mesh-control seat NAME --add NODE\`), or give \`--force\` to release it anyway; the seat is then named by \`mesh-control status\` until a holder is added.
    `,
    examples: [
      ['Retire node workstation', 'mesh-control node release workstation'],
      ['Retire the last holder of a seat something needs, knowingly', 'mesh-control node release cache1 --force'],
    ],
  });

  force = Option.Boolean('--force', false, { description: 'Release it even when it is the last holder of a seat something still needs' });

  node = Option.String({ name: 'NAME' });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'node.release', { node: this.node, ...(this.force ? { force: true } : {}) });
    return { text: answer.text, json: answer.result };
  }
}
