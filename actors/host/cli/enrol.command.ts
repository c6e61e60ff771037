import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { decodeToken } from '../../shared/crypto/token';
import { enrol } from '../enrolment/enrol';
import { enrolThroughLifecycle } from '../enrolment/enrol-lifecycle.actor';
import { parseTimeout } from '../enrolment/parse-timeout';
import { HostCommand } from './host-command';

/**
 * `nox-mesh-host enrol --token T`: make this machine a node of the mesh that issued the token.
 * The token is read before anything else is touched, so a mistyped one says so and changes
 * nothing.
 */
export class EnrolCommand extends HostCommand {
  static override paths = [['enrol']];
  static override usage = Command.Usage({
    description: 'Join the mesh with a one-time token from mesh-control token issue',
    details: `
      Makes this machine's identity and WireGuard key, checks the broker's certificate against
      the fingerprint in the token before sending anything, and asks the controller to enrol
      it, sending what the machine is (its profile and inventory). Whether this machine joins
      as a new node or again as one the mesh knows was decided when the token was issued; an
      identity already here is replaced, and what the host owns stays its own. The running
      host (nox-mesh-host run, or the service) then receives the node's declarations.

      A machine whose store was lost (state.json and state.last-good.json both gone) is
      rebuilt by enrolling it again with a token issued for its node (mesh-control token
      issue --node NAME): the first full declaration hands back what the node owned, and the
      host removes what of it is no longer declared. It takes back only files and directories
      inside its root that it could have made, and follows no symbolic link.
    `,
    examples: [['Enrol with a token', '$0 enrol --token nmt1-…']],
  });

  token = Option.String('--token', { required: true, description: 'The token printed by mesh-control token issue' });
  timeout = Option.String('--timeout', '30s', { description: 'How long to wait for the broker, and then for the controller (default 30s)' });

  async run(): Promise<CommandResult> {
    // A mistyped token says so before anything is touched, the status file included; the
    // lifecycle's `operator.enrol` carries it as typed, and the enrolment reads it again.
    decodeToken(this.token);
    const timeoutMs = parseTimeout(this.timeout);
    const { stateDir } = await this.settings();
    // The lifecycle machine's `enrolling`, with the enrolment as its work. A store lost with both
    // its files is rebuilt by enrolling (see HostStore.load).
    const enrolled = await enrolThroughLifecycle(this.token, {
      stateDir,
      enrol: (typed) => this.withHost((host) => enrol(host, decodeToken(typed), { timeoutMs }), { rebuild: true }),
      statusFailed: (error) => this.context.stderr.write(`warning: could not write the status file: ${(error as Error)?.message ?? String(error)}\n`),
    });
    const again = enrolled.replaced_node === null ? '' : ` (this machine was node ${enrolled.replaced_node}; that identity is replaced)`;
    return {
      text: `enrolled as ${enrolled.node}${again}; start the host (\`nox-mesh-host run\`, or the service) to receive its declarations`,
      json: enrolled,
    };
  }
}
