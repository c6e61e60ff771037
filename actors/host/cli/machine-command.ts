import { Option } from 'clipanion';
import { MeshCommand } from '../../shared/cli/mesh-command';
import { requireRootDirectory } from '../profile/root-directory';

/**
 * The base of every verb that looks at a machine: `--root`, the one way to point a verb at a
 * machine other than this one (a mounted disk or image, or a folder to try the host on). The
 * verbs that work on the host's store add `--state-dir` (HostCommand).
 */
export abstract class MachineCommand extends MeshCommand {
  root = Option.String('--root', '/', {
    description: 'Treat this directory as the machine (a mounted disk or image, or a folder to try the host on): every path is read and declared under it (default /)',
  });

  /** The root directory, absolute and refused (OperatorError) when it is not a readable directory. */
  rootDirectory(): Promise<string> {
    return requireRootDirectory(this.root);
  }
}
