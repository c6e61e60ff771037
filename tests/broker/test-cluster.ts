import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { jetstreamManager } from '@nats-io/jetstream';
import { nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { type BrokerUser, writeAuthFile } from '../../actors/controller/broker/auth-file';
import { clientUrlOf, clusterServerConfig, clusterServerPaths, writeBrokerCluster, type ClusterServer } from '../../actors/controller/broker/broker-cluster';
import { writeBrokerConfig, type BrokerConfig } from '../../actors/controller/broker/broker-config';
import { brokerPaths } from '../../actors/controller/broker/broker-paths';
import { BrokerDidNotStart } from '../../actors/controller/broker/broker-errors';
import { type RunningBroker, startBroker } from '../../actors/controller/broker/broker-process';
import { generateTlsMaterial } from '../../actors/controller/broker/tls-material';
import { connectPinnedAny } from '../../actors/shared/bus/connect-pinned-any';
import { freePort } from '../../actors/shared/testing/free-port';
import { killBrokerOnExit } from './kill-broker-on-exit';

/** One server of a test cluster. */
export interface TestClusterServer {
  name: string;
  url: string;
  configFile: string;
  config: BrokerConfig;
  /** The running process, or undefined while it is down. */
  process: RunningBroker | undefined;
}

/**
 * A real cluster of nats-servers on 127.0.0.1, written by writeBrokerCluster as
 * `mesh-control broker cluster` writes it (the mesh's broker certificate on every server, TLS
 * routes with a certificate each), with one controller user. Servers can be killed with
 * SIGKILL and started again on the same store.
 */
export interface TestCluster {
  dir: string;
  /** Every server's client address. */
  urls: string[];
  fingerprint: string;
  certPem: string;
  controllerSeed: Uint8Array;
  controllerNkey: string;
  servers: TestClusterServer[];
  /** A pinned controller connection that fails over between the servers. */
  connectAsController(name?: string): Promise<NatsConnection>;
  /** `kill -9` the server. */
  kill(name: string): Promise<void>;
  /** Starts the server again on its configuration and store. */
  start(name: string): Promise<void>;
  /** Writes the user list (the controller's included) and reloads every running server. */
  setUsers(users: BrokerUser[]): Promise<void>;
  stop(): Promise<void>;
}

/** How many times a cluster is started on new ports when one was taken before its server bound it. */
const ATTEMPTS = 3;

/**
 * Starts a cluster of `size` servers (default 3) in a temporary broker directory. A port chosen
 * free may be taken before its server binds it (by another process's outgoing connection, from
 * the same range): the whole cluster is then started again on new ports, since every server's
 * configuration names the others' routes.
 */
export async function startTestCluster(options: { size?: number; dirPrefix?: string } = {}): Promise<TestCluster> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startTestClusterOnce(options);
    } catch (error) {
      if (!(error instanceof BrokerDidNotStart && error.addressInUse) || attempt >= ATTEMPTS) throw error;
    }
  }
}

async function startTestClusterOnce(options: { size?: number; dirPrefix?: string }): Promise<TestCluster> {
  const size = options.size ?? 3;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${options.dirPrefix ?? 'mesh test-cluster'} `));
  const servers: TestClusterServer[] = [];
  const letGo = new Map<string, () => void>();
  const connections = new Set<NatsConnection>();
  try {
    const shared = brokerPaths(dir);
    const material = await generateTlsMaterial({ keyFile: shared.keyFile, certFile: shared.certFile, subjectAltNames: ['localhost', '127.0.0.1'] });
    const controller = createUser();
    const controllerNkey = controller.getPublicKey();
    let users: BrokerUser[] = [{ role: 'controller', nkey: controllerNkey }];
    await writeAuthFile(shared.authFile, users);
    const specs: ClusterServer[] = [];
    for (let index = 0; index < size; index += 1) {
      specs.push({ name: `s${index + 1}`, client: { host: '127.0.0.1', port: await freePort() }, route: { host: '127.0.0.1', port: await freePort() } });
    }
    const written = await writeBrokerCluster(dir, specs);
    const routes = specs.map((spec) => `tls://127.0.0.1:${spec.route.port}`);
    for (const spec of specs) {
      const config = clusterServerConfig(dir, written.manifest.name, spec, routes);
      // Small limits: several clusters may run on one test machine.
      config.jetstream.maxMemoryStore = 32 * 1024 * 1024;
      config.jetstream.maxFileStore = 256 * 1024 * 1024;
      servers.push({ name: spec.name, url: clientUrlOf(spec), configFile: clusterServerPaths(dir, spec.name).configFile, config, process: undefined });
    }
    const byName = (name: string): TestClusterServer => {
      const server = servers.find((each) => each.name === name);
      if (server === undefined) throw new Error(`no server ${name} in the test cluster`);
      return server;
    };
    const start = async (name: string): Promise<void> => {
      const server = byName(name);
      if (server.process?.running === true) return;
      // Written again with the smaller limits; the same bytes each time.
      await writeBrokerConfig(server.configFile, server.config);
      server.process = await startBroker({ configFile: server.configFile, config: server.config, readyTimeoutMs: 20_000 });
      letGo.set(name, killBrokerOnExit(server.process));
    };
    // Every start settled before any failure is thrown, so the clean-up below stops them all.
    const started = await Promise.allSettled(specs.map((spec) => start(spec.name)));
    const failed = started.find((each): each is PromiseRejectedResult => each.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const urls = servers.map((server) => server.url);
    const controllerSeed = controller.getSeed();
    // Ready once JetStream answers: the servers have routed and elected a leader. Seen to take
    // over 20 s on a loaded machine, so the wait is the test's, not the code under test's.
    const probe = await connectPinnedAny(urls, material.fingerprint, { authenticator: nkeyAuthenticator(controllerSeed), name: 'test cluster ready', reconnect: false, timeout: 5000 });
    try {
      const deadline = Date.now() + 90_000;
      for (;;) {
        try {
          await (await jetstreamManager(probe, { timeout: 5000 })).getAccountInfo();
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    } finally {
      await probe.close();
    }
    return {
      dir,
      urls,
      fingerprint: material.fingerprint,
      certPem: material.certPem,
      controllerSeed,
      controllerNkey,
      servers,
      connectAsController: async (name = 'test controller') => {
        const connection = await connectPinnedAny(urls, material.fingerprint, {
          authenticator: nkeyAuthenticator(controllerSeed),
          name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          timeout: 5000,
        });
        connections.add(connection);
        void connection.closed().then(() => connections.delete(connection));
        return connection;
      },
      kill: async (name) => {
        const server = byName(name);
        const running = server.process;
        if (running === undefined || !running.running) return;
        process.kill(running.pid, 'SIGKILL');
        await running.exited;
        letGo.get(name)?.();
        server.process = undefined;
      },
      start,
      setUsers: async (next) => {
        users = next;
        await writeAuthFile(shared.authFile, users);
        await Promise.all(servers.map((server) => (server.process?.running === true ? server.process.reload() : undefined)));
      },
      stop: async () => {
        await Promise.allSettled([...connections].map((connection) => connection.close()));
        await Promise.allSettled(servers.map(async (server) => {
          await server.process?.stop({ graceMs: 3000 });
          letGo.get(server.name)?.();
        }));
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.allSettled(servers.map((server) => server.process?.stop({ graceMs: 1000 })));
    for (const release of letGo.values()) release();
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}
