import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '@nats-io/nkeys';
import {
  connect,
  nkeyAuthenticator,
  usernamePasswordAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import { type BrokerUser, writeAuthFile } from '../../actors/controller/broker/auth-file';
import { brokerConfigFor, writeBrokerConfig } from '../../actors/controller/broker/broker-config';
import { BrokerDidNotStart } from '../../actors/controller/broker/broker-errors';
import { brokerPaths } from '../../actors/controller/broker/broker-paths';
import { type RunningBroker, startBroker } from '../../actors/controller/broker/broker-process';
import { enrolmentInboxPrefix, enrolmentUserName, nodeInboxPrefix } from '../../actors/shared/bus/subjects';
import { generateTlsMaterial } from '../../actors/controller/broker/tls-material';
import { freePort } from '../../actors/shared/testing/free-port';
import { killBrokerOnExit } from './kill-broker-on-exit';

/** Options for a test broker. */
export interface TestBrokerOptions {
  /** Start of the temp directory's name. It always contains a space, so every test that uses a
   * broker also proves that paths are quoted in its configuration. */
  dirPrefix?: string;
}

/** Connection options a test may add or override (servers, TLS and credentials are set). */
export type TestConnectionOptions = Omit<NodeConnectionOptions, 'servers' | 'authenticator' | 'tls'>;

/**
 * A real nats-server with TLS, JetStream and nkey users on a free port of 127.0.0.1, made the way
 * `mesh-control init` makes a broker (the same TLS material, configuration and user list code).
 * It starts with one controller user; node and enrolment users are added and removed as the
 * controller would, each change written and reloaded before the promise settles.
 */
export interface TestBroker {
  /** `tls://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** SHA-256 of the broker certificate, lower-case hex: what a token carries. */
  fingerprint: string;
  certPem: string;
  /** The certificate clients trust; the same self-signed certificate as certPem. */
  caPem: string;
  /** The controller user's nkey seed (`SU…`), for nkeyAuthenticator. Secret. */
  controllerSeed: Uint8Array;
  controllerNkey: string;
  /** The broker's directory (configuration, user list, TLS material, JetStream store, log). */
  dir: string;
  broker: RunningBroker;
  /** Lets a node's nkey in, with a node's permissions. Written and reloaded. */
  addNodeUser(name: string, nkeyPublic: string): Promise<void>;
  /** Lets a token's one-time user in. Written and reloaded. */
  addEnrolmentUser(tokenId: string, password: string): Promise<void>;
  /** Removes a node's or a token's user and reloads: its live connections are closed. */
  removeUser(user: { node: string } | { token_id: string }): Promise<void>;
  /** Makes the server read its files again, and waits for it to confirm. */
  reload(): Promise<void>;
  /** Connects as the controller (inbox `_INBOX`). */
  connectAsController(options?: TestConnectionOptions): Promise<NatsConnection>;
  /** Connects with a node's nkey seed and the node's own inbox prefix. */
  connectAsNode(name: string, seed: Uint8Array, options?: TestConnectionOptions): Promise<NatsConnection>;
  /** Connects as a token's enrolment user, with its own inbox prefix. */
  connectAsEnrolment(tokenId: string, password: string, options?: TestConnectionOptions): Promise<NatsConnection>;
  /** Closes every connection made through the helpers, stops the server and removes the directory. */
  stop(): Promise<void>;
}

const ATTEMPTS = 3;

/**
 * Starts a test broker. Every test file that starts one stops it in `afterAll`; a broker left
 * running when the test process exits is killed on the way out all the same.
 */
export async function startTestBroker(options: TestBrokerOptions = {}): Promise<TestBroker> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${options.dirPrefix ?? 'mesh test-broker'} `));
  try {
    const paths = brokerPaths(dir);
    const material = await generateTlsMaterial({ keyFile: paths.keyFile, certFile: paths.certFile, subjectAltNames: ['localhost', '127.0.0.1'] });
    const controller = createUser();
    const controllerNkey = controller.getPublicKey();
    let users: BrokerUser[] = [{ role: 'controller', nkey: controllerNkey }];
    await writeAuthFile(paths.authFile, users);

    let broker: RunningBroker | undefined;
    let port = 0;
    for (let attempt = 1; broker === undefined; attempt += 1) {
      port = await freePort();
      const config = brokerConfigFor(paths, {
        serverName: `test-broker-${port}`,
        host: '127.0.0.1',
        port,
        maxMemoryStore: 64 * 1024 * 1024,
        maxFileStore: 256 * 1024 * 1024,
      });
      await writeBrokerConfig(paths.configFile, config);
      try {
        broker = await startBroker({ configFile: paths.configFile, config });
      } catch (error) {
        // Another process may take the port between freePort() closing it and the server binding it.
        if (!(error instanceof BrokerDidNotStart && error.addressInUse) || attempt >= ATTEMPTS) throw error;
      }
    }
    const running = broker;
    const letGo = killBrokerOnExit(running);

    const url = `tls://127.0.0.1:${port}`;
    const connections = new Set<NatsConnection>();
    const open = async (options: NodeConnectionOptions): Promise<NatsConnection> => {
      const connection = await connect({ servers: url, tls: { ca: material.certPem }, ...options });
      connections.add(connection);
      void connection.closed().then(() => connections.delete(connection));
      return connection;
    };
    const change = async (next: BrokerUser[]): Promise<void> => {
      await writeAuthFile(paths.authFile, next);
      users = next;
      await running.reload();
    };
    const controllerSeed = controller.getSeed();

    return {
      url,
      port,
      fingerprint: material.fingerprint,
      certPem: material.certPem,
      caPem: material.certPem,
      controllerSeed,
      controllerNkey,
      dir,
      broker: running,
      addNodeUser: (name, nkey) => change([...users, { role: 'node', node: name, nkey }]),
      addEnrolmentUser: (tokenId, password) => change([...users, { role: 'enrolment', token_id: tokenId, password }]),
      removeUser: (who) =>
        change(users.filter((user) => ('node' in who ? !(user.role === 'node' && user.node === who.node) : !(user.role === 'enrolment' && user.token_id === who.token_id)))),
      reload: () => running.reload(),
      connectAsController: (extra = {}) => open({ ...extra, authenticator: nkeyAuthenticator(controllerSeed) }),
      connectAsNode: (name, seed, extra = {}) => open({ inboxPrefix: nodeInboxPrefix(name), ...extra, authenticator: nkeyAuthenticator(seed) }),
      connectAsEnrolment: (tokenId, password, extra = {}) =>
        open({ inboxPrefix: enrolmentInboxPrefix(tokenId), ...extra, authenticator: usernamePasswordAuthenticator(enrolmentUserName(tokenId), password) }),
      stop: async () => {
        await Promise.allSettled([...connections].map((connection) => connection.close()));
        await running.stop();
        letGo();
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}
