import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { TokenTargetAmbiguous, TokenTargetMissing } from '../tokens/token-errors';
import { ControllerCommand } from './controller-command';

/** `mesh-control token issue`: a one-time enrolment token, printed once. */
export class TokenIssueCommand extends ControllerCommand {
  static override paths = [['token', 'issue']];
  static override usage = Command.Usage({
    description: 'Issue a one-time enrolment token and print it, once',
    details: `
      Asks the serving controller for a token that lets one machine join: --new for a machine the mesh has not seen, --node NAME to enrol a machine again as that node. A token for --node revokes the node's current identity at once: its broker user is removed and its connection closed.

      The token is printed once and kept nowhere; carry it to the machine by hand and run \`nox-mesh-host enrol --token …\` there. It is single use and expires after --ttl (1m to 7d, default 15m).
    `,
    examples: [
      ['A token for a new machine', 'mesh-control token issue --new'],
      ['Enrol a machine again as node workstation', 'mesh-control token issue --node workstation --ttl 1h'],
    ],
  });

  isNew = Option.Boolean('--new', false, { description: 'For a machine the mesh has not seen' });
  node = Option.String('--node', { description: 'For the existing node NAME; revokes its current identity' });
  ttl = Option.String('--ttl', { description: 'How long the token stays usable: 15m (default), 1m to 7d' });

  async run(): Promise<CommandResult> {
    // Checked here too, so a plain mistake is answered without a round trip to the controller.
    if (this.node !== undefined && this.isNew) throw new TokenTargetAmbiguous(this.node);
    if (this.node === undefined && !this.isNew) throw new TokenTargetMissing();
    const args = {
      ...(this.isNew ? { new: true } : {}),
      ...(this.node === undefined ? {} : { node: this.node }),
      ...(this.ttl === undefined ? {} : { ttl: this.ttl }),
    };
    const answer = await callController(this.meshDir(), 'token.issue', args);
    return { text: answer.text, json: answer.result };
  }
}
