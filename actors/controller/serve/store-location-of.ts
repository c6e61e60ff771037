import path from 'node:path';
import type { ControllerConfig } from '../../../schema/controller-config';
import { MeshConfigInvalid } from '../config/config-errors';
import { embeddedStoreDir, type StoreLocation } from '../store/open-store';

/**
 * Where mesh.json says the store is, as openStore takes it. openStore places the embedded store
 * in `<dir>/store`, so a PGlite data directory of any other name is refused here rather than
 * opened somewhere else.
 */
export function storeLocationOf(config: ControllerConfig, meshFile: string): StoreLocation {
  if (config.store.kind === 'postgres') return { url: config.store.url };
  const parent = path.dirname(config.store.dir);
  if (embeddedStoreDir(parent) !== config.store.dir) {
    throw new MeshConfigInvalid(meshFile, `store.dir must be a directory named "store" (it is ${config.store.dir})`);
  }
  return { dir: parent };
}
