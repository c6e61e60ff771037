import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { checkHandAct } from '../hand-acts/hand-act-args';
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

      A push is a hand act: \`--why\` is required, and it is kept with the push in the hand-act log (\`mesh-control hand-acts\`), with \`--condition\` when it answers an open condition.
    `,
    examples: [
      ['Send node alpha its declaration', 'mesh-control push alpha --why "disk replaced; it lost its services"'],
      ['Send every node behind', 'mesh-control push --behind --why "the broker lost its stream"'],
      ['Answering a condition', 'mesh-control push alpha --why "consumer deleted by hand" --condition report-missing.alpha'],
    ],
  });

  node = Option.String({ name: 'NODE', required: false });
  behind = Option.Boolean('--behind', false, { description: 'Send only the nodes whose last send differs from what they should hold' });
  why = Option.String('--why', { description: 'Why you push by hand, in a line (required): kept in the hand-act log' });
  condition = Option.String('--condition', { description: 'The id of the condition this push answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    checkHandAct('push', { why: this.why, condition: this.condition }, { example: `mesh-control push${this.node === undefined ? '' : ` ${this.node}`} --why "its disk was replaced"` });
    const args: Record<string, unknown> = { why: this.why };
    if (this.condition !== undefined) args.condition = this.condition;
    if (this.node !== undefined) args.node = this.node;
    if (this.behind) args.behind = true;
    const answer = await callController(this.meshDir(), 'push', args);
    return { text: answer.text, json: answer.result };
  }
}
