import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { BrokerConfigInvalid } from './broker-errors';
import { AUTH_FILE_NAME, type BrokerPaths } from './broker-paths';
import { natsString } from './nats-conf-string';

/** Everything the broker's nats-server configuration says. Paths are absolute. */
export interface BrokerConfig {
  /** The server's name; no spaces (nats-server refuses them). */
  serverName: string;
  /** Where clients connect. `0.0.0.0` or `::` for every address. */
  listen: { host: string; port: number };
  /** TLS is required of every client; the timeout is for the handshake, in seconds. */
  tls: { certFile: string; keyFile: string; timeoutSeconds: number };
  jetstream: { storeDir: string; maxMemoryStore: number; maxFileStore: number };
  pidFile: string;
  logFile: string;
  /** The user list's file name, beside the configuration file. */
  authInclude: string;
  /** Present when this server is one of a cluster (see broker-cluster.ts); absent for one server. */
  cluster?: BrokerClusterConfig;
}

/**
 * What one server of a cluster says about its routes: where it listens for the other servers,
 * every server's route address (its own included: nats-server skips itself), and the TLS both
 * ends of a route present and verify.
 */
export interface BrokerClusterConfig {
  /** The cluster's name; every server of one mesh gives the same. */
  name: string;
  listen: { host: string; port: number };
  /** `tls://HOST:PORT` of every server's route listener. */
  routes: string[];
  /**
   * This server's route key and certificate, and the bundle of every server's route
   * certificate: a route is accepted only from a server whose certificate is in the bundle.
   */
  tls: { certFile: string; keyFile: string; caFile: string; timeoutSeconds: number };
}

/** Settings a person may choose; the rest follows from the broker directory. */
export interface BrokerConfigOptions {
  serverName?: string;
  host?: string;
  port?: number;
  tlsTimeoutSeconds?: number;
  maxMemoryStore?: number;
  maxFileStore?: number;
}

/** The client port nats-server uses by default. */
export const DEFAULT_BROKER_PORT = 4222;

/**
 * The configuration of the broker in `paths.dir`. Defaults: every address, port 4222, a 5 s TLS
 * handshake (nodes on phones and slow links take longer than nats-server's default), 256 MiB of
 * memory and 1 GiB of disk for JetStream, which holds one declaration per node and the lease.
 */
export function brokerConfigFor(paths: BrokerPaths, options: BrokerConfigOptions = {}): BrokerConfig {
  return {
    serverName: options.serverName ?? 'mesh-broker',
    listen: { host: options.host ?? '0.0.0.0', port: options.port ?? DEFAULT_BROKER_PORT },
    tls: { certFile: paths.certFile, keyFile: paths.keyFile, timeoutSeconds: options.tlsTimeoutSeconds ?? 5 },
    jetstream: {
      storeDir: paths.storeDir,
      maxMemoryStore: options.maxMemoryStore ?? 256 * 1024 * 1024,
      maxFileStore: options.maxFileStore ?? 1024 * 1024 * 1024,
    },
    pidFile: paths.pidFile,
    logFile: paths.logFile,
    authInclude: AUTH_FILE_NAME,
  };
}

/**
 * The configuration as nats-server reads it. Deterministic: the same config gives the same
 * bytes, so rewriting an unchanged configuration changes nothing. Every string is quoted
 * (natsString); authorization comes from the included user list, which nats-server reads again
 * on every reload.
 */
export function renderBrokerConfig(config: BrokerConfig): string {
  checkConfig(config);
  const { host, port } = config.listen;
  const listen = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return [
    '# The Novox Mesh broker. mesh-control writes this file whole; edits here are lost.',
    '# Users and their permissions are in the included file, rewritten as nodes come and go.',
    `server_name: ${natsString(config.serverName)}`,
    `listen: ${natsString(listen)}`,
    `pid_file: ${natsString(config.pidFile)}`,
    `log_file: ${natsString(config.logFile)}`,
    ...(process.env.MESH_BROKER_TRACE === '1' ? ['trace: true', 'debug: true'] : []),
    '',
    '# Every client connection is TLS; nodes pin this certificate by its fingerprint.',
    'tls {',
    `  cert_file: ${natsString(config.tls.certFile)}`,
    `  key_file: ${natsString(config.tls.keyFile)}`,
    `  timeout: ${config.tls.timeoutSeconds}`,
    '}',
    '',
    'jetstream {',
    `  store_dir: ${natsString(config.jetstream.storeDir)}`,
    `  max_memory_store: ${config.jetstream.maxMemoryStore}`,
    `  max_file_store: ${config.jetstream.maxFileStore}`,
    '}',
    '',
    ...(config.cluster === undefined ? [] : clusterLines(config.cluster)),
    `include "${config.authInclude}"`,
    '',
  ].join('\n');
}

function clusterLines(cluster: BrokerClusterConfig): string[] {
  const { host, port } = cluster.listen;
  return [
    '# Routes to the other servers of the cluster: TLS both ways, each end verified against the',
    '# bundle of route certificates. Streams and buckets are replicated over them.',
    'cluster {',
    `  name: ${natsString(cluster.name)}`,
    `  listen: ${natsString(isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`)}`,
    '  tls {',
    `    cert_file: ${natsString(cluster.tls.certFile)}`,
    `    key_file: ${natsString(cluster.tls.keyFile)}`,
    `    ca_file: ${natsString(cluster.tls.caFile)}`,
    '    verify: true',
    `    timeout: ${cluster.tls.timeoutSeconds}`,
    '  }',
    `  routes: [${cluster.routes.map(natsString).join(', ')}]`,
    '}',
    '',
  ];
}

/**
 * Writes the configuration atomically to `file` (0644: it holds paths, no secrets) and makes
 * the directories nats-server writes into. The user list is written separately (writeAuthFile).
 */
export async function writeBrokerConfig(file: string, config: BrokerConfig): Promise<void> {
  const text = renderBrokerConfig(config);
  for (const dir of [path.dirname(file), path.dirname(config.pidFile), path.dirname(config.logFile)]) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  }
  await fs.mkdir(config.jetstream.storeDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, text, 0o644);
}

function checkConfig(config: BrokerConfig): void {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.serverName)) {
    throw new BrokerConfigInvalid('a broker name is 1-64 letters, digits, "-", "_" or "."', config.serverName, 'choose a name without spaces or punctuation, e.g. mesh-broker');
  }
  const { host, port } = config.listen;
  if (isIP(host) === 0 && !/^[A-Za-z0-9_.-]{1,253}$/.test(host)) {
    throw new BrokerConfigInvalid('the broker listen address is neither an IP address nor a host name', host, 'give an address such as 0.0.0.0, 127.0.0.1 or ::');
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new BrokerConfigInvalid('the broker port is not a TCP port (1-65535)', String(port), `give a port such as ${DEFAULT_BROKER_PORT}`);
  }
  if (!(config.tls.timeoutSeconds > 0) || !Number.isFinite(config.tls.timeoutSeconds)) {
    throw new BrokerConfigInvalid('the TLS handshake timeout must be a positive number of seconds', String(config.tls.timeoutSeconds), 'give a timeout such as 5');
  }
  for (const [what, size] of [['memory', config.jetstream.maxMemoryStore], ['disk', config.jetstream.maxFileStore]] as const) {
    if (!Number.isSafeInteger(size) || size < 1) {
      throw new BrokerConfigInvalid(`the JetStream ${what} limit must be a whole number of bytes`, String(size), 'give a size in bytes, e.g. 268435456');
    }
  }
  for (const file of [config.tls.certFile, config.tls.keyFile, config.jetstream.storeDir, config.pidFile, config.logFile]) {
    // nats-server resolves relative paths against its working directory, not the config's.
    if (!path.isAbsolute(file)) throw new BrokerConfigInvalid('broker paths must be absolute', file, 'give the path from /');
  }
  if (config.cluster !== undefined) checkCluster(config.cluster);
  // An include path is read up to the next quote with no escapes, and relative to this file.
  if (!/^[A-Za-z0-9_.-]+$/.test(config.authInclude) || config.authInclude.startsWith('.')) {
    throw new BrokerConfigInvalid('the user list must be a plain file name beside the configuration', config.authInclude, `name it ${AUTH_FILE_NAME}`);
  }
}

function checkCluster(cluster: BrokerClusterConfig): void {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cluster.name)) {
    throw new BrokerConfigInvalid('a cluster name is 1-64 letters, digits, "-" or "_"', cluster.name, 'choose a name such as mesh');
  }
  const { host, port } = cluster.listen;
  if (isIP(host) === 0 && !/^[A-Za-z0-9_.-]{1,253}$/.test(host)) {
    throw new BrokerConfigInvalid('the route listen address is neither an IP address nor a host name', host, 'give an address such as 0.0.0.0 or 10.0.0.1');
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new BrokerConfigInvalid('the route port is not a TCP port (1-65535)', String(port), 'give a port such as 6222');
  }
  if (cluster.routes.length < 2) {
    throw new BrokerConfigInvalid('a cluster needs the routes of at least two servers', cluster.routes.join(', '), 'name every server of the cluster, three for JetStream to survive losing one');
  }
  for (const route of cluster.routes) {
    if (!/^tls:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]{1,253}):\d{1,5}$/.test(route)) {
      throw new BrokerConfigInvalid('a route is not tls://HOST:PORT', route, 'give each server\'s route address, e.g. tls://10.0.0.2:6222');
    }
  }
  for (const file of [cluster.tls.certFile, cluster.tls.keyFile, cluster.tls.caFile]) {
    if (!path.isAbsolute(file)) throw new BrokerConfigInvalid('broker paths must be absolute', file, 'give the path from /');
  }
  if (!(cluster.tls.timeoutSeconds > 0) || !Number.isFinite(cluster.tls.timeoutSeconds)) {
    throw new BrokerConfigInvalid('the route TLS handshake timeout must be a positive number of seconds', String(cluster.tls.timeoutSeconds), 'give a timeout such as 5');
  }
}
