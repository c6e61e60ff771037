import { Command, Option } from 'clipanion';
import { OperatorError } from '../../shared/operator-error';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { clusterServerConfig, clusterServerPaths, readClusterManifest } from '../broker/broker-cluster';
import { brokerConfigFor, type BrokerConfig } from '../broker/broker-config';
import { BrokerConfigInvalid } from '../broker/broker-errors';
import { brokerPaths } from '../broker/broker-paths';
import { startBroker } from '../broker/broker-process';
import { loadControllerConfig } from '../config/load-controller-config';
import { readBrokerListen } from '../config/read-broker-listen';
import { shellWord } from '../config/shell-word';
import { waitForStopSignal } from '../serve/wait-for-stop-signal';
import { ControllerCommand } from './controller-command';

/** The broker ended on its own, not because it was asked to stop. */
export class BrokerExited extends OperatorError {}

/** `mesh-control broker`: runs the mesh's nats-server in the foreground. */
export class BrokerCommand extends ControllerCommand {
  static override paths = [['broker']];
  static override usage = Command.Usage({
    description: 'Run the mesh\'s broker (nats-server) in the foreground',
    details: `
      Starts nats-server on the configuration \`mesh-control init\` wrote in DIR/broker and waits until it accepts TLS connections. SIGTERM or SIGINT stops it (JetStream closed cleanly); the command exits when the broker does.

      The same broker runs without mesh-control as \`nats-server -c DIR/broker/nats-server.conf\` (a systemd unit or an OpenRC service, for example); the controller reloads it by the pid file that configuration names.

      With \`--server NAME\`, runs that server of the cluster \`mesh-control broker cluster\` wrote (its configuration is DIR/broker/cluster/NAME/nats-server.conf).
    `,
    examples: [
      ['The one-server broker', 'mesh-control broker --dir /var/lib/mesh-control'],
      ['Server m2 of a cluster', 'mesh-control broker --dir /var/lib/mesh-control --server m2'],
    ],
  });

  server = Option.String('--server', { description: 'Run this server of the mesh\'s cluster (see mesh-control broker cluster)' });

  async run(): Promise<CommandResult> {
    const config = await loadControllerConfig(this.meshDir());
    let configFile = config.broker.config_file;
    let brokerConfig: BrokerConfig;
    if (this.server === undefined) {
      const listen = await readBrokerListen(config.broker.config_file);
      brokerConfig = brokerConfigFor(brokerPaths(config.broker.dir), { host: listen.host, port: listen.port });
    } else {
      const manifest = await readClusterManifest(config.broker.dir);
      const server = manifest?.servers.find((each) => each.name === this.server);
      if (manifest === undefined || server === undefined) {
        throw new BrokerConfigInvalid(manifest === undefined ? 'this mesh has no cluster' : `the cluster has no server of that name (it has ${manifest.servers.map((each) => each.name).join(', ')})`, this.server, manifest === undefined ? 'write one first: mesh-control broker cluster --server NAME=HOST:PORT:ROUTE_PORT …' : 'give one of the names listed');
      }
      configFile = clusterServerPaths(config.broker.dir, server.name).configFile;
      brokerConfig = clusterServerConfig(config.broker.dir, manifest.name, server, []);
    }
    const broker = await startBroker({ configFile, config: brokerConfig });
    const stopping = new AbortController();
    this.context.stderr.write(
      `broker running (nats-server pid ${broker.pid}) for ${config.broker.url}; log ${brokerConfig.logFile}\n` +
        `stop it with Ctrl-C or SIGTERM; the same broker runs as: nats-server -c ${shellWord(configFile)}\n`,
    );
    const signal = waitForStopSignal(stopping.signal);
    const ended = await Promise.race([signal.then((name) => ({ asked: name })), broker.exited.then((exit) => ({ exit }))]);
    stopping.abort();
    if ('asked' in ended) {
      const exit = await broker.stop();
      return { text: `broker stopped (${ended.asked})`, json: { stopped: true, signal: ended.asked, code: exit.code } };
    }
    const how = ended.exit.code === null ? `was ended by ${ended.exit.signal}` : `exited with status ${ended.exit.code}`;
    throw new BrokerExited(`the broker ${how}`, { value: brokerConfig.logFile, next: 'read the end of the broker log named here, fix what it says, then start the broker again' });
  }
}
