import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ControllerConfig } from '../../../../schema/controller-config';
import { brokerConfigFor } from '../../broker/broker-config';
import { brokerPaths } from '../../broker/broker-paths';
import { startBroker, type RunningBroker } from '../../broker/broker-process';
import { initMesh, type InitMeshResult } from '../../config/init-mesh';
import { loadControllerConfig } from '../../config/load-controller-config';
import { freePort } from '../../../shared/testing/free-port';
import { killBrokerOnExit } from '../../../../tests/broker/kill-broker-on-exit';

/** A mesh made by `initMesh` in a temporary directory, with its broker running. */
export interface TestMesh {
  /** The mesh directory (its name has a space, so every printed path is proved quoted). */
  dir: string;
  config: ControllerConfig;
  init: InitMeshResult;
  broker: RunningBroker;
  /** The broker's certificate, PEM: what a test connection trusts. */
  certPem: string;
  /** Stops the broker and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Makes a mesh the way `mesh-control init` does, on a free port of 127.0.0.1, and starts its
 * broker the way `mesh-control broker` does. With `database` the store is that PostgreSQL
 * database (fast); without, the embedded PGlite store (seconds, and most of a gigabyte while
 * it is created). Call stop() in afterAll.
 */
export async function startTestMesh(options: { database?: string } = {}): Promise<TestMesh> {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-control-'));
  const dir = path.join(parent, 'test mesh');
  try {
    const port = await freePort();
    const init = await initMesh({ dir, brokerUrl: `tls://127.0.0.1:${port}`, ...(options.database === undefined ? {} : { database: options.database }) });
    const config = await loadControllerConfig(dir);
    const brokerConfig = brokerConfigFor(brokerPaths(config.broker.dir), { host: '127.0.0.1', port });
    const running = await startBroker({ configFile: config.broker.config_file, config: brokerConfig });
    const letGo = killBrokerOnExit(running);
    return {
      dir,
      config,
      init,
      broker: running,
      certPem: await fs.readFile(config.broker.cert_file, 'utf8'),
      stop: async () => {
        await running.stop();
        letGo();
        await fs.rm(parent, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(parent, { recursive: true, force: true });
    throw error;
  }
}
