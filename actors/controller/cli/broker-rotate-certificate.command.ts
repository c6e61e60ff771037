import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { ForceWithoutSwitch } from '../broker/rotation-errors';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control broker rotate-certificate [--switch [--force]]`: renew the broker's certificate without enrolling anyone again. */
export class BrokerRotateCertificateCommand extends ControllerCommand {
  static override paths = [['broker', 'rotate-certificate']];
  static override usage = Command.Usage({
    description: 'Renew the broker\'s TLS certificate without enrolling any node again',
    details: `
      Nodes pin the broker's certificate by its fingerprint, so it is renewed in two steps, both asked of the serving controller.

      Without \`--switch\`: makes the broker's next key and certificate (same names, valid ten years) beside the current ones in DIR/broker/tls, and sends every node its declaration again, signed with the mesh's key, pinning both certificates. Run again, it announces the same next certificate again. \`mesh-control status\` then shows which nodes do not pin it yet.

      With \`--switch\`: once every node pins the next certificate, the broker is switched to it (the old key and certificate are kept as previous-*), mesh.json and new tokens pin it, and every node is sent its declaration pinning it alone. Refused while a node does not pin it yet, naming it, unless \`--force\`: such a node (one away across the rotation) is cut off and says so, and must be enrolled again (\`mesh-control token issue --node NAME\`, then \`nox-mesh-host enrol --token …\` on it).
    `,
    examples: [
      ['Make and announce the next certificate', 'mesh-control broker rotate-certificate'],
      ['Switch the broker to it once every node pins it', 'mesh-control broker rotate-certificate --switch'],
      ['Switch even though a node that is away will need enrolling again', 'mesh-control broker rotate-certificate --switch --force --json'],
    ],
  });

  switch = Option.Boolean('--switch', false, { description: 'Make the broker present the next certificate, and pin it alone' });
  force = Option.Boolean('--force', false, { description: 'With --switch: switch even while some nodes do not pin the next certificate' });

  async run(): Promise<CommandResult> {
    if (this.force && !this.switch) throw new ForceWithoutSwitch();
    const answer = await callController(this.meshDir(), 'broker.certificate.rotate', { ...(this.switch ? { switch: true } : {}), ...(this.force ? { force: true } : {}) });
    return { text: answer.text, json: answer.result };
  }
}
