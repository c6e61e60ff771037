import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { parseClusterServer } from '../broker/broker-cluster';
import { makeCluster } from '../broker/make-cluster';
import { ControllerCommand } from './controller-command';

/** `mesh-control broker cluster --server NAME=HOST:PORT:ROUTE_PORT …`: writes an N-server cluster. */
export class BrokerClusterCommand extends ControllerCommand {
  static override paths = [['broker', 'cluster']];
  static override usage = Command.Usage({
    description: 'Write the configuration of a NATS cluster for the mesh (2 to 5 servers; 3 survive losing one)',
    details: `
      Writes, under DIR/broker/cluster/NAME/, each server's nats-server configuration: clients on HOST:PORT over TLS with the mesh's broker certificate (the one tokens pin, the same on every server), the accounts MESH, NODES and ENROL from the mesh's user list (a link to DIR/broker/auth.conf), JetStream, and TLS routes to every server on ROUTE_PORT, each server with its own route key and certificate, verified both ways against DIR/broker/cluster/routes-ca.pem.

      Then mesh.json names every server's address, so new tokens and every declaration carry them and hosts fail over between them, and the replica count, so the controller makes the declaration stream, its consumers and every bucket with that many replicas.

      Start each server with \`mesh-control broker --server NAME\` (or nats-server -c on its configuration); see docs/cluster.md for three machines. Refused when the broker directory already holds a cluster.
    `,
    examples: [
      ['Three servers on one machine, for a trial', 'mesh-control broker cluster --server a=127.0.0.1:4222:6222 --server b=127.0.0.1:4223:6223 --server c=127.0.0.1:4224:6224'],
      ['Three machines', 'mesh-control broker cluster --server m1=10.0.0.1:4222:6222 --server m2=10.0.0.2:4222:6222 --server m3=10.0.0.3:4222:6222 --json'],
    ],
  });

  servers = Option.Array('--server', { required: true, description: 'A server of the cluster, NAME=HOST:CLIENT_PORT:ROUTE_PORT; give it once per server' });
  name = Option.String('--name', { description: 'The cluster\'s name (default mesh)' });

  async run(): Promise<CommandResult> {
    const servers = this.servers.map(parseClusterServer);
    const made = await makeCluster(this.meshDir(), servers, this.name === undefined ? {} : { name: this.name });
    const text = [
      `Wrote a cluster "${made.manifest.name}" of ${servers.length} servers; streams and buckets keep ${made.replicas} replicas`,
      ...servers.map((server) => `  ${server.name}  clients ${made.urls[servers.indexOf(server)]}  routes ${server.route.host}:${server.route.port}  ${made.configFiles[server.name]}`),
      `route certificates: ${made.routeBundle}`,
      `new tokens carry ${made.url}; hosts learn every address from their declarations`,
      'Next, start each server (a service per machine, or by hand), then mesh-control serve:',
      ...Object.values(made.commands).map((command) => `  ${command}`),
    ].join('\n');
    return { text, json: made };
  }
}
