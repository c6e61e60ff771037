import path from 'node:path';
import { Option } from 'clipanion';
import { MeshCommand } from '../../shared/cli/mesh-command';
import { DEFAULT_MESH_DIR } from '../config/mesh-dir-layout';

/** The base of every `mesh-control` verb: `--dir`, the mesh directory, and `--json`. */
export abstract class ControllerCommand extends MeshCommand {
  dir = Option.String('--dir', DEFAULT_MESH_DIR, {
    description: `The mesh directory made by \`mesh-control init\` (default ${DEFAULT_MESH_DIR})`,
  });

  /** The mesh directory, absolute. */
  meshDir(): string {
    return path.resolve(this.dir);
  }
}
