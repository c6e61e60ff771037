import path from 'node:path';

/**
 * Where a broker's files live inside its directory. One directory holds everything, so a mesh
 * directory can be moved, backed up or removed whole, and the user list sits beside the
 * configuration that includes it (nats-server resolves `include` relative to the including file).
 */
export interface BrokerPaths {
  dir: string;
  configFile: string;
  /** The user list, included by name from configFile; 0600. */
  authFile: string;
  keyFile: string;
  certFile: string;
  storeDir: string;
  pidFile: string;
  logFile: string;
}

/** The file name of the user list, as the configuration includes it. */
export const AUTH_FILE_NAME = 'auth.conf';

/** The layout of a broker directory; every path absolute, as nats-server needs them. */
export function brokerPaths(dir: string): BrokerPaths {
  const root = path.resolve(dir);
  return {
    dir: root,
    configFile: path.join(root, 'nats-server.conf'),
    authFile: path.join(root, AUTH_FILE_NAME),
    keyFile: path.join(root, 'tls', 'broker.key'),
    certFile: path.join(root, 'tls', 'broker.crt'),
    storeDir: path.join(root, 'jetstream'),
    pidFile: path.join(root, 'nats-server.pid'),
    logFile: path.join(root, 'nats-server.log'),
  };
}
