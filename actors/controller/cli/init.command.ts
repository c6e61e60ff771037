import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { DEFAULT_BROKER_URL, DEFAULT_OVERLAY_CIDR, initMesh, type InitMeshResult } from '../config/init-mesh';
import { formatTable } from '../../shared/cli/format-table';
import { ControllerCommand } from './controller-command';

/** `mesh-control init`: makes a new mesh in a directory. */
export class InitCommand extends ControllerCommand {
  static override paths = [['init']];
  static override usage = Command.Usage({
    description: 'Make a new mesh: keys, the broker\'s TLS material and configuration, and the store',
    details: `
      Makes, in --dir: the controller's signing key, the controller's and the operator's broker keys (0600), the broker's TLS key and self-signed certificate, its nats-server configuration (TLS, JetStream under DIR/broker) and user list, the store with every migration applied (PGlite in DIR/store, or PostgreSQL with --database), and mesh.json.

      Refuses a directory that already holds a mesh: keys nodes trust are never replaced.
    `,
    examples: [
      ['A one-machine mesh', 'mesh-control init --dir /var/lib/mesh-control'],
      ['A broker other machines reach, on PostgreSQL', 'mesh-control init --broker-url tls://mesh.example.net:4222 --database postgres://mesh@localhost/mesh'],
    ],
  });

  brokerUrl = Option.String('--broker-url', { description: `How hosts reach the broker, tls://HOST:PORT (default ${DEFAULT_BROKER_URL})` });
  listen = Option.String('--listen', { description: 'Where the broker listens, HOST:PORT (default: the broker URL\'s port; 127.0.0.1 for a local URL, else every address)' });
  database = Option.String('--database', { description: 'A postgres:// URL; the embedded store in DIR/store unless given' });
  overlayCidr = Option.String('--overlay-cidr', { description: `The overlay's address pool (default ${DEFAULT_OVERLAY_CIDR})` });

  async run(): Promise<CommandResult> {
    const result = await initMesh({
      dir: this.meshDir(),
      ...(this.brokerUrl === undefined ? {} : { brokerUrl: this.brokerUrl }),
      ...(this.listen === undefined ? {} : { listen: this.listen }),
      ...(this.database === undefined ? {} : { database: this.database }),
      ...(this.overlayCidr === undefined ? {} : { overlayCidr: this.overlayCidr }),
    });
    return { text: formatInit(result), json: result };
  }
}

function formatInit(result: InitMeshResult): string {
  return [
    `Made a new mesh in ${result.dir}`,
    '',
    formatTable(result.files.map((file) => [file.mode, file.path, file.what])),
    '',
    `broker       ${result.broker.url} (listening on ${result.broker.listen}; certificate for ${result.broker.subject_alt_names.join(', ')})`,
    `fingerprint  ${result.broker.fingerprint}`,
    `controller   ${result.controller_public_key}`,
    `store        ${result.store.kind === 'pglite' ? `embedded (PGlite) in ${result.store.dir}` : 'PostgreSQL'}; ${result.migrations_applied.length} migrations applied`,
    '',
    'Next, each in its own terminal (or as services):',
    ...result.next.map((command) => `  ${command}`),
    `The broker can also run as plain nats-server: ${result.broker_command}`,
  ].join('\n');
}
