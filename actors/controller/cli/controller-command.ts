import path from 'node:path';
import { Option } from 'clipanion';
import { MeshCommand } from '../../shared/cli/mesh-command';
import { DEFAULT_MESH_DIR } from '../config/mesh-dir-layout';

/** The environment variable that names the mesh directory when `--dir` does not. */
export const MESH_DIR_VARIABLE = 'MESH_DIR';

/** The base of every `mesh-control` verb: `--dir`, the mesh directory, and `--json`. */
export abstract class ControllerCommand extends MeshCommand {
  dir = Option.String('--dir', DEFAULT_MESH_DIR, {
    env: MESH_DIR_VARIABLE,
    description: `The mesh directory made by \`mesh-control init\` (default $${MESH_DIR_VARIABLE}, else ${DEFAULT_MESH_DIR})`,
  });

  /** The mesh directory, absolute. */
  meshDir(): string {
    return path.resolve(this.dir);
  }
}
