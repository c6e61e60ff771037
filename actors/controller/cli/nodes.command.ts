import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control nodes`: every node, its state, address, version running and last contact. */
export class NodesCommand extends ControllerCommand {
  static override paths = [['nodes']];
  static override usage = Command.Usage({
    description: 'List the nodes: state, overlay address, version running, and when each was last seen',
    details: `
      Last contact is a fact ("last seen 4 days ago", "never seen"), not a verdict: a laptop shut for a week is doing nothing wrong.
    `,
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'nodes.list', {});
    return { text: answer.text, json: answer.result };
  }
}
