import { BrokerNotRunning } from './broker-errors';
import { brokerPaths } from './broker-paths';
import { reloadBroker } from './broker-process';
import { clusterServerPaths, readClusterManifest } from './broker-cluster';

/**
 * Makes the mesh's broker read its user list again: the one server, or every server of the
 * cluster that runs on this machine (by the pid file in its directory). A cluster server that
 * is not running is skipped: it reads the current list when it starts. Fails with
 * BrokerNotRunning when no server at all could be reloaded, and with the reload's own error
 * when a running server refused the list.
 *
 * Servers on other machines read their own copy of the list; docs/cluster.md says how it is
 * kept the same.
 */
export async function reloadMeshBrokers(brokerDir: string): Promise<void> {
  const manifest = await readClusterManifest(brokerDir);
  if (manifest === undefined) {
    const paths = brokerPaths(brokerDir);
    await reloadBroker({ pidFile: paths.pidFile, logFile: paths.logFile });
    return;
  }
  const skipped: string[] = [];
  for (const server of manifest.servers) {
    const paths = clusterServerPaths(brokerDir, server.name);
    try {
      await reloadBroker({ pidFile: paths.pidFile, logFile: paths.logFile });
    } catch (error) {
      if (!(error instanceof BrokerNotRunning)) throw error;
      skipped.push(server.name);
    }
  }
  if (skipped.length === manifest.servers.length) {
    throw new BrokerNotRunning(`no server of the cluster runs on this machine (${skipped.join(', ')})`);
  }
}
