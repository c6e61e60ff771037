import { loadControllerConfig } from '../config/load-controller-config';
import { writeControllerConfig } from '../config/write-controller-config';
import { readBrokerUserList, writeBrokerUserList } from '../serve/broker-user-list';
import { writeBrokerCluster, type ClusterServer, type WrittenCluster } from './broker-cluster';

/** What `mesh-control broker cluster` made, and how to start it. */
export interface MadeCluster extends WrittenCluster {
  /** Streams and buckets are kept on this many servers. */
  replicas: number;
  /** The address new tokens carry: the first server's. */
  url: string;
  /** How to start each server, by name (as a service, or by hand). */
  commands: Record<string, string>;
}

/**
 * Turns the mesh in `meshDir` into a cluster of `servers`: writes each server's configuration
 * (writeBrokerCluster), then mesh.json with every server's address (hosts and controllers fail
 * over between them) and the replica count (the cluster's size, at most five), which the
 * controller gives the declaration stream, its consumers and every KV bucket it makes.
 */
export async function makeCluster(meshDir: string, servers: readonly ClusterServer[], options: { name?: string } = {}): Promise<MadeCluster> {
  const config = await loadControllerConfig(meshDir);
  const written = await writeBrokerCluster(config.broker.dir, servers, options);
  const replicas = Math.min(servers.length, 5);
  const url = written.urls[0] as string;
  await writeControllerConfig(meshDir, { ...config, broker: { ...config.broker, url, servers: written.urls, replicas } });
  // The sync user goes into the list now, so a copy of this directory taken before any
  // controller runs already lets every server's `broker sync` in.
  const syncNkey = written.manifest.sync_nkey;
  const previous = await readBrokerUserList(config.broker.dir);
  if (syncNkey !== undefined && previous.problem === undefined && previous.users.some((user) => user.role === 'controller')) {
    await writeBrokerUserList(config.broker.dir, [...previous.users.filter((user) => user.role !== 'sync'), { role: 'sync', nkey: syncNkey }]);
  }
  const commands = Object.fromEntries(servers.map((server) => [server.name, `mesh-control broker --dir ${meshDir} --server ${server.name}`]));
  return { ...written, replicas, url, commands };
}
