import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import * as z from 'zod';
import { decodeBase64, generateSigningKeyPair, nkeyPublicOf, writeKeyFile } from '../../shared/crypto';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { brokerConfigFor, writeBrokerConfig, type BrokerConfig } from './broker-config';
import { BrokerConfigInvalid } from './broker-errors';
import { AUTH_FILE_NAME, brokerPaths, type BrokerPaths } from './broker-paths';
import { isPathTaken } from './is-path-taken';
import { generateTlsMaterial, readTlsMaterial } from './tls-material';

/** One server of a cluster: its name, where clients reach it, where the other servers do. */
export const ClusterServer = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, { error: 'a server name is 1-32 letters, digits, "-" or "_"' }),
  client: z.strictObject({ host: z.string().min(1).max(253), port: z.int().min(1).max(65535) }),
  route: z.strictObject({ host: z.string().min(1).max(253), port: z.int().min(1).max(65535) }),
});
/** See {@link ClusterServer}. */
export type ClusterServer = z.infer<typeof ClusterServer>;

/**
 * `<broker dir>/cluster/cluster.json`: the cluster `mesh-control broker cluster` wrote, read by
 * `mesh-control broker --server NAME` and by the controller when it reloads the user list.
 */
export const ClusterManifest = z.strictObject({
  format: z.literal(1),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  servers: z.array(ClusterServer).min(2).max(5),
  /** The nkey of `mesh-control broker sync` (its seed is `cluster/sync.nk`); absent in clusters written before it. */
  sync_nkey: z.string().regex(/^U[A-Z2-7]{55}$/).optional(),
});
/** See {@link ClusterManifest}. */
export type ClusterManifest = z.infer<typeof ClusterManifest>;

/** The most servers a cluster may have: JetStream keeps at most five replicas. */
export const MAX_CLUSTER_SERVERS = 5;

/** Where one cluster server's files live: a broker directory of its own under `cluster/`. */
export interface ClusterServerPaths extends BrokerPaths {
  routeKeyFile: string;
  routeCertFile: string;
}

/** The cluster's own files under a broker directory. */
export function clusterDir(brokerDir: string): string {
  return path.join(path.resolve(brokerDir), 'cluster');
}

/** The manifest file under a broker directory. */
export function clusterManifestFile(brokerDir: string): string {
  return path.join(clusterDir(brokerDir), 'cluster.json');
}

/**
 * The seed of `mesh-control broker sync`'s own broker user, 0600: copied to every broker
 * machine with the broker directory; it lets its holder read the user-list bucket and nothing
 * else (syncPermissions).
 */
export function syncKeyFile(brokerDir: string): string {
  return path.join(clusterDir(brokerDir), 'sync.nk');
}

/** The bundle of every server's route certificate, which each server verifies routes against. */
export function routeBundleFile(brokerDir: string): string {
  return path.join(clusterDir(brokerDir), 'routes-ca.pem');
}

/**
 * The files of server `name`: its configuration, store, pid and log in `cluster/<name>/`, its
 * route key and certificate there too. Its client TLS is the mesh's broker certificate, the one
 * tokens pin, shared by every server (docs/cluster.md says why).
 */
export function clusterServerPaths(brokerDir: string, name: string): ClusterServerPaths {
  const own = brokerPaths(path.join(clusterDir(brokerDir), name));
  const shared = brokerPaths(brokerDir);
  return {
    ...own,
    keyFile: shared.keyFile,
    certFile: shared.certFile,
    routeKeyFile: path.join(own.dir, 'tls', 'route.key'),
    routeCertFile: path.join(own.dir, 'tls', 'route.crt'),
  };
}

/**
 * Reads `HOST:CLIENT_PORT:ROUTE_PORT` after `NAME=`, as `--server` takes it
 * (`b1=10.0.0.1:4222:6222`, `b1=[fd00::1]:4222:6222`). Throws BrokerConfigInvalid naming the
 * shape when it is not that.
 */
export function parseClusterServer(text: string): ClusterServer {
  const match = /^([^=]+)=(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5}):(\d{1,5})$/.exec(text);
  const host = match === null ? undefined : (match[2] ?? match[3]);
  const parsed = match === null || host === undefined || (match[2] !== undefined && isIP(host) !== 6)
    ? undefined
    : ClusterServer.safeParse({ name: match[1], client: { host, port: Number(match[4]) }, route: { host, port: Number(match[5]) } });
  if (parsed === undefined || !parsed.success) {
    throw new BrokerConfigInvalid(
      `a cluster server is NAME=HOST:CLIENT_PORT:ROUTE_PORT${parsed === undefined ? '' : ` (${parsed.error.issues[0]?.message ?? 'it does not match'})`}`,
      text,
      'give each server as e.g. --server b1=10.0.0.1:4222:6222',
    );
  }
  return parsed.data;
}

/** What writeBrokerCluster made. */
export interface WrittenCluster {
  manifest: ClusterManifest;
  /** Every server's client address, as hosts dial it: what mesh.json `broker.servers` holds. */
  urls: string[];
  /** Each server's configuration file, by server name. */
  configFiles: Record<string, string>;
  /** The bundle of route certificates. */
  routeBundle: string;
}

/**
 * Writes the configuration of a cluster of `servers` for the mesh whose broker directory is
 * `brokerDir`: for each server a directory `cluster/<name>/` with its nats-server
 * configuration (its client listener presenting the mesh's broker certificate, JetStream, the
 * cluster block with TLS routes to every server) and its own route key and certificate
 * (self-signed, for server and client authentication); the bundle of every route certificate;
 * and the manifest. Each server includes `auth.conf` beside its configuration, a link to the
 * mesh's user list, so the accounts are the same on every server.
 *
 * Refuses a directory that already holds a cluster (route keys are never replaced in place),
 * fewer than two or more than five servers, a name, client address or route address given twice.
 */
export async function writeBrokerCluster(brokerDir: string, servers: readonly ClusterServer[], options: { name?: string } = {}): Promise<WrittenCluster> {
  const name = options.name ?? 'mesh';
  checkServers(servers);
  if (await isPathTaken(clusterManifestFile(brokerDir))) {
    throw new BrokerConfigInvalid('this broker directory already holds a cluster', clusterManifestFile(brokerDir), 'remove its cluster/ directory first if it is to be made again; the route keys in it are replaced');
  }
  const shared = brokerPaths(brokerDir);
  // The client certificate must exist: it is what every token of the mesh pins.
  await readTlsMaterial(shared.keyFile, shared.certFile);
  const routes = servers.map((server) => `tls://${hostPort(server.route.host, server.route.port)}`);
  const pems: string[] = [];
  for (const server of servers) {
    const paths = clusterServerPaths(brokerDir, server.name);
    await fs.rm(paths.routeKeyFile, { force: true });
    await fs.rm(paths.routeCertFile, { force: true });
    const names = [...new Set(['localhost', '127.0.0.1', server.route.host])];
    const material = await generateTlsMaterial({ keyFile: paths.routeKeyFile, certFile: paths.routeCertFile, subjectAltNames: names, clientAuth: true, commonName: `novox-mesh route ${server.name}` });
    pems.push(material.certPem);
  }
  const bundle = routeBundleFile(brokerDir);
  await writeFileAtomic(bundle, pems.join(''), 0o644);
  const configFiles: Record<string, string> = {};
  for (const server of servers) {
    const paths = clusterServerPaths(brokerDir, server.name);
    const config = clusterServerConfig(brokerDir, name, server, routes);
    await writeBrokerConfig(paths.configFile, config);
    // The user list the controller keeps is the one every server reads.
    await fs.rm(paths.authFile, { force: true });
    await fs.symlink(path.relative(paths.dir, shared.authFile), paths.authFile);
    configFiles[server.name] = paths.configFile;
  }
  const syncSeed = generateSigningKeyPair();
  await fs.rm(syncKeyFile(brokerDir), { force: true });
  await writeKeyFile(syncKeyFile(brokerDir), decodeBase64(syncSeed.secret_key) as Uint8Array);
  const manifest: ClusterManifest = { format: 1, name, servers: [...servers], sync_nkey: nkeyPublicOf(syncSeed.public_key) };
  await writeFileAtomic(clusterManifestFile(brokerDir), `${JSON.stringify(manifest, null, 2)}\n`, 0o644);
  return { manifest, urls: servers.map(clientUrlOf), configFiles, routeBundle: bundle };
}

/** The configuration of one server of the cluster, as writeBrokerCluster writes it. */
export function clusterServerConfig(brokerDir: string, clusterName: string, server: ClusterServer, routes: readonly string[]): BrokerConfig {
  const paths = clusterServerPaths(brokerDir, server.name);
  const config = brokerConfigFor(paths, { serverName: server.name, host: server.client.host, port: server.client.port });
  return {
    ...config,
    authInclude: AUTH_FILE_NAME,
    cluster: {
      name: clusterName,
      listen: { host: server.route.host, port: server.route.port },
      routes: [...routes],
      tls: { certFile: paths.routeCertFile, keyFile: paths.routeKeyFile, caFile: routeBundleFile(brokerDir), timeoutSeconds: 5 },
    },
  };
}

/** Reads the manifest; undefined when the broker directory holds no cluster. */
export async function readClusterManifest(brokerDir: string): Promise<ClusterManifest | undefined> {
  let text: string;
  try {
    text = await fs.readFile(clusterManifestFile(brokerDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = ClusterManifest.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new BrokerConfigInvalid('the cluster manifest is not one mesh-control wrote', clusterManifestFile(brokerDir), 'write the cluster again with mesh-control broker cluster');
  }
  return parsed.data;
}

/** How hosts dial a server: `tls://HOST:PORT`. */
export function clientUrlOf(server: ClusterServer): string {
  return `tls://${hostPort(server.client.host, server.client.port)}`;
}

function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

function checkServers(servers: readonly ClusterServer[]): void {
  if (servers.length < 2 || servers.length > MAX_CLUSTER_SERVERS) {
    throw new BrokerConfigInvalid(`a cluster has 2 to ${MAX_CLUSTER_SERVERS} servers`, String(servers.length), 'give three servers with --server, so JetStream survives losing one');
  }
  const seen = new Set<string>();
  for (const server of servers) {
    for (const key of [`name ${server.name}`, `client ${hostPort(server.client.host, server.client.port)}`, `route ${hostPort(server.route.host, server.route.port)}`]) {
      if (seen.has(key)) throw new BrokerConfigInvalid('a cluster names one server, client address or route address twice', key, 'give each server its own name and ports');
      seen.add(key);
    }
    for (const host of [server.client.host, server.route.host]) {
      // The same address is where the server listens and what hosts and the other servers dial.
      if (host === '0.0.0.0' || host === '::') {
        throw new BrokerConfigInvalid('a cluster server needs the address the others reach it at, not every address', `${server.name}: ${host}`, 'give the machine\'s own address, e.g. --server m1=10.0.0.1:4222:6222');
      }
    }
    if (server.client.host === server.route.host && server.client.port === server.route.port) {
      throw new BrokerConfigInvalid('a server\'s client and route ports are the same', `${server.name}: ${server.client.port}`, 'give routes their own port, e.g. 6222');
    }
  }
}
