import type { ControllerLog } from '../logs/log-fields';
import { Command, Option } from 'clipanion';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { BrokerUnreachable, connectPinnedAny } from '../../shared/bus';
import { BROKER_SYNC_INBOX_PREFIX } from '../../shared/bus/subjects';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { brokerCertificatesOnDisk } from '../broker/broker-certificates';
import { clientUrlOf, clusterServerPaths, readClusterManifest, syncKeyFile } from '../broker/broker-cluster';
import { BrokerConfigInvalid, BrokerNotRunning } from '../broker/broker-errors';
import { reloadBroker } from '../broker/broker-process';
import { applyBrokerUsers, bindBrokerUsersBucket, runBrokerSync, type BrokerSyncTarget } from '../broker/sync-broker-users';
import { loadControllerConfig } from '../config/load-controller-config';
import { readNkeySeedFile } from '../config/nkey-seed-file';
import { waitForStopSignal } from '../serve/wait-for-stop-signal';
import { ControllerCommand } from './controller-command';

/** The bucket could not be reached with `--once`. */
export class BrokerSyncUnreachable extends OperatorError {}

/**
 * `mesh-control broker sync --server NAME`: on each broker machine of a cluster, keeps that
 * server's user list the one the acting controller wrote to the cluster's bucket.
 */
export class BrokerSyncCommand extends ControllerCommand {
  static override paths = [['broker', 'sync']];
  static override usage = Command.Usage({
    description: 'Keep one cluster server\'s user list the acting controller\'s (run one per broker machine)',
    details: `
      The acting controller writes the broker's user list (nodes, open tokens' enrolment users) to its own machine's auth.conf and to the cluster's replicated bucket \`mesh-broker_users\`. This service, one per broker machine beside \`mesh-control broker --server NAME\`, reads the bucket every second and, at each new revision, writes the list to that server's auth.conf (and DIR/broker/users.json, for a controller that takes over on this machine) and reloads the server. A node enrolled through one server can then link through any.

      It logs in as its own broker user (the key DIR/broker/cluster/sync.nk that \`mesh-control broker cluster\` made), which may read that bucket and nothing else. It connects to its own server first and to the others when that one is down. \`--once\` applies the current list and exits.
    `,
    examples: [
      ['On machine m2, as a service', 'mesh-control broker sync --dir /var/lib/mesh-control --server m2'],
      ['Apply the current list now and say what it held', 'mesh-control broker sync --dir /var/lib/mesh-control --server m2 --once --json'],
    ],
  });

  server = Option.String('--server', { required: true, description: 'The cluster server on this machine whose user list is kept' });
  once = Option.Boolean('--once', false, { description: 'Apply the current list once and exit' });
  intervalMs = Option.String('--interval-ms', '1000', { description: 'How often the bucket is read, in ms (default 1000)' });

  async run(): Promise<CommandResult> {
    const interval = Number(this.intervalMs);
    if (!Number.isInteger(interval) || interval < 100 || interval > 60_000) {
      throw new BrokerConfigInvalid('--interval-ms is a whole number of milliseconds from 100 to 60000', this.intervalMs, 'leave it out for the default of 1000');
    }
    const config = await loadControllerConfig(this.meshDir());
    const manifest = await readClusterManifest(config.broker.dir);
    const server = manifest?.servers.find((each) => each.name === this.server);
    if (manifest === undefined || server === undefined) {
      throw new BrokerConfigInvalid(manifest === undefined ? 'this mesh has no cluster' : `the cluster has no server of that name (it has ${manifest.servers.map((each) => each.name).join(', ')})`, this.server, manifest === undefined ? 'write one first: mesh-control broker cluster --server NAME=HOST:PORT:ROUTE_PORT …' : 'give one of the names listed');
    }
    if (manifest.sync_nkey === undefined) {
      throw new BrokerConfigInvalid('this cluster was written before `broker sync` existed: it has no sync user', syncKeyFile(config.broker.dir), 'write the cluster again (mesh-control broker cluster, after moving DIR/broker/cluster aside), or keep auth.conf the same on every machine by hand');
    }
    const credentials = await readNkeySeedFile(syncKeyFile(config.broker.dir));
    if (credentials.nkey !== manifest.sync_nkey) {
      throw new BrokerConfigInvalid('the sync key is not the one cluster.json names', syncKeyFile(config.broker.dir), 'copy the broker directory from the machine that wrote the cluster again');
    }
    const paths = clusterServerPaths(config.broker.dir, server.name);
    const target: BrokerSyncTarget = {
      brokerDir: config.broker.dir,
      authFile: paths.authFile,
      syncNkey: manifest.sync_nkey,
      reload: async () => {
        try {
          await reloadBroker({ pidFile: paths.pidFile, logFile: paths.logFile });
        } catch (error) {
          // A server that is not running reads the list when it starts.
          if (!(error instanceof BrokerNotRunning)) throw error;
        }
      },
    };
    // Its own server first: the one whose list it keeps, and the one most likely up when it is.
    const urls = [clientUrlOf(server), ...manifest.servers.filter((each) => each !== server).map(clientUrlOf)];
    const stopping = new AbortController();
    const signal = waitForStopSignal(stopping.signal);
    void signal.then(() => stopping.abort());
    const log: ControllerLog = (line, fields) => void this.context.stderr.write(`${new Date().toISOString()} ${fields?.level === 'warn' || fields?.level === 'error' ? `${fields.level}: ` : ''}${line}\n`);
    const connect = (): Promise<NatsConnection> => connectPinnedAny(urls, config.broker.fingerprint, {
      authenticator: nkeyAuthenticator(credentials.seed),
      inboxPrefix: BROKER_SYNC_INBOX_PREFIX,
      name: `mesh-control broker sync (${server.name})`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      timeout: 5000,
    }, { alsoTrusted: () => brokerCertificatesOnDisk(config.broker.cert_file, config.broker.dir) });

    if (this.once) {
      const nc = await connect().catch((error: unknown) => {
        throw new BrokerSyncUnreachable(`no server of the cluster answered (${(error as Error).message})`, { value: urls.join(' '), next: 'start a server of the cluster (mesh-control broker --server NAME), then run this again' });
      });
      try {
        const step = await applyBrokerUsers(await bindBrokerUsersBucket(nc), target, undefined);
        const text = step.kind === 'applied'
          ? `applied the user list at revision ${step.revision} to ${server.name} (${step.nodes} node(s), ${step.tokens} open token(s))`
          : 'the bucket holds no user list yet: start mesh-control serve, which writes it when it acts';
        return { text, json: { server: server.name, ...step } };
      } finally {
        await nc.close();
      }
    }

    let nc: NatsConnection | undefined;
    while (nc === undefined && !stopping.signal.aborted) {
      try {
        nc = await connect();
      } catch (error) {
        if (!(error instanceof BrokerUnreachable)) throw error;
        log(`broker sync: no server answered yet (${error.message}); trying again in 2 s`, { level: 'warn' });
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
    if (nc === undefined) return { text: 'broker sync stopped', json: { stopped: true } };
    log(`broker sync running for server ${server.name}: reading bucket mesh-broker_users every ${interval} ms`, { level: 'info', server: server.name });
    try {
      await runBrokerSync(await bindBrokerUsersBucket(nc), target, { intervalMs: interval, signal: stopping.signal, log });
    } finally {
      await nc.close().catch(() => undefined);
    }
    return { text: 'broker sync stopped', json: { stopped: true, signal: await signal } };
  }
}
