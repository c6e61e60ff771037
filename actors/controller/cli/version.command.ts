import { Command } from 'clipanion';
import { MeshCommand, type CommandResult } from '../../shared/cli/mesh-command';
import { runningVersion } from '../../shared/version';

/** `mesh-control version`: the version of this controller and the runtime it runs on. */
export class VersionCommand extends MeshCommand {
  static override paths = [['version']];
  static override usage = Command.Usage({
    description: 'Print the version of this controller and of the Node.js runtime it runs on',
    examples: [['The version as JSON', '$0 version --json']],
  });

  async run(): Promise<CommandResult> {
    const version = runningVersion();
    return { text: `mesh-control ${version} (Node.js ${process.version})`, json: { program: 'mesh-control', version, node: process.version } };
  }
}
