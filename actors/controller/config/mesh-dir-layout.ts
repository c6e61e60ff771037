import path from 'node:path';
import { embeddedStoreDir } from '../store/open-store';

/** Where `mesh-control` keeps a mesh unless `--dir` says otherwise. */
export const DEFAULT_MESH_DIR = '/var/lib/mesh-control';

/** The name of the file that marks a directory as holding a mesh. */
export const MESH_FILE_NAME = 'mesh.json';

/**
 * Where everything of one mesh lives inside its directory. One directory holds it all, so a
 * mesh can be backed up, moved or removed whole; mesh.json records the same paths, and is
 * written last by `init`, so its presence means the rest is there.
 */
export interface MeshDirLayout {
  dir: string;
  meshFile: string;
  /** Secret keys, each one base64 line, 0600, in a 0700 directory. */
  keysDir: string;
  /** The controller's Ed25519 signing key (32-byte seed): every declaration is signed with it. */
  signingKeyFile: string;
  /** The Ed25519 seed of the controller's broker user (its nkey). */
  controllerNkeyFile: string;
  /** The Ed25519 seed of the operator's broker user: what the CLI connects with. */
  operatorNkeyFile: string;
  /** The broker's directory: configuration, user list, TLS material, JetStream store, log. */
  brokerDir: string;
  /** The embedded store's data directory (PGlite), when the mesh uses it. */
  storeDir: string;
}

/** The layout of the mesh directory `dir`; every path absolute. */
export function meshDirLayout(dir: string): MeshDirLayout {
  const root = path.resolve(dir);
  const keysDir = path.join(root, 'keys');
  return {
    dir: root,
    meshFile: path.join(root, MESH_FILE_NAME),
    keysDir,
    signingKeyFile: path.join(keysDir, 'controller-signing.key'),
    controllerNkeyFile: path.join(keysDir, 'controller.nkey'),
    operatorNkeyFile: path.join(keysDir, 'operator.nkey'),
    brokerDir: path.join(root, 'broker'),
    storeDir: embeddedStoreDir(root),
  };
}
