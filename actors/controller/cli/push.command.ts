import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control push [NODE] [--behind]`: send declarations now. */
export class PushCommand extends ControllerCommand {
  static override paths = [['push']];
  static override usage = Command.Usage({
    description: 'Send a node (or every node) its declaration now, every module at its newest revision',
    details: `
      \`push NODE\` sends that node only, with every module it runs at its newest revision — a revision its policy records, or a plan has not sent it yet, included — and never any other node.

      \`push\` with no node does that for the whole mesh, and says first that it was the whole mesh.

      \`push --behind\` sends every node whose last declaration differs from what it should hold at the revisions it runs now; it moves no module to a newer revision.
    `,
    examples: [
      ['Send node alpha its declaration', 'mesh-control push alpha'],
      ['Send every node behind', 'mesh-control push --behind'],
    ],
  });

  node = Option.String({ name: 'NODE', required: false });
  behind = Option.Boolean('--behind', false, { description: 'Send only the nodes whose last send differs from what they should hold' });

  async run(): Promise<CommandResult> {
    const args: Record<string, unknown> = {};
    if (this.node !== undefined) args.node = this.node;
    if (this.behind) args.behind = true;
    const answer = await callController(this.meshDir(), 'push', args);
    return { text: answer.text, json: answer.result };
  }
}
