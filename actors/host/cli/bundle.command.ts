import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { foundationBundleFor } from '../foundation/foundation-bundle-for';
import { detectProfile } from '../profile/detect-profile';
import { MachineCommand } from './machine-command';

/** `--broker-url` is not a tls:// URL with a host and a port. */
export class BrokerUrlInvalid extends OperatorError {}

/**
 * `nox-mesh-host bundle`: prints the bundle this host carries for raising a mesh on this
 * machine (the first node), as the file `reconcile --bundle` applies. On an episodic host the
 * file says why it cannot be the first node.
 */
export class BundleCommand extends MachineCommand {
  static override paths = [['bundle']];
  static override usage = Command.Usage({
    description: 'Print the bundle that raises a mesh on this machine (the first node), as a file',
    details: `
      The bundle is made for this machine's profile: the controller's package (mesh-control),
      the mesh made by \`mesh-control init\` on the embedded store, and the broker and the
      controller as services of the machine's init (with start-stop-daemon definitions where
      no init is booted). \`nox-mesh-host reconcile\` on a machine that is not a node yet
      applies it; keep it as a file to read or change first, and apply it with \`reconcile
      --bundle FILE\`.

      The broker URL (\`--broker-url\`) says how other machines will reach the broker, and the
      broker's certificate is made for that host. Without it, the mesh is reachable from this
      machine only, at tls://127.0.0.1:4222.

      An episodic host cannot be a first node: its bundle says why and what to do instead, and
      \`reconcile\` refuses it. The output is JSON either way.
    `,
    examples: [
      ['See what the first node\'s reconcile would raise', '$0 bundle'],
      ['A mesh other machines reach, kept as a file and applied', '$0 bundle --broker-url tls://mesh.example.net:4222 > first-node.json && $0 reconcile --bundle first-node.json'],
    ],
  });

  brokerUrl = Option.String('--broker-url', {
    description: 'How other machines will reach the broker, tls://HOST:PORT (default tls://127.0.0.1:4222: this machine only)',
  });

  async run(): Promise<CommandResult> {
    if (this.brokerUrl !== undefined) checkBrokerUrl(this.brokerUrl);
    const root = await this.rootDirectory();
    const bundle = foundationBundleFor(await detectProfile({ root }), { root, ...(this.brokerUrl === undefined ? {} : { brokerUrl: this.brokerUrl }) });
    // The file is the output, with --json or without: it is meant to be kept and applied.
    return { text: JSON.stringify(bundle, null, 2), json: bundle };
  }
}

/** Refuses a broker URL `mesh-control init` would refuse, before a bundle is written with it. */
function checkBrokerUrl(url: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.protocol !== 'tls:' || parsed.hostname === '' || parsed.port === '' || parsed.pathname !== '' && parsed.pathname !== '/') {
    throw new BrokerUrlInvalid('the broker URL is not tls://HOST:PORT', {
      value: url,
      next: 'give the name or address other machines reach this one by, and the port, like --broker-url tls://mesh.example.net:4222',
    });
  }
}
