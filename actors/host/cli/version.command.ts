import { Command } from 'clipanion';
import { MeshCommand, type CommandResult } from '../../shared/cli/mesh-command';
import { runningVersion } from '../../shared/version';

/** `nox-mesh-host version`: the version of this binary. The self-upgrade check runs exactly this. */
export class VersionCommand extends MeshCommand {
  static override paths = [['version']];
  static override usage = Command.Usage({ description: 'Print the version of this host binary' });

  async run(): Promise<CommandResult> {
    const version = runningVersion();
    return { text: `nox-mesh-host ${version}`, json: { program: 'nox-mesh-host', version, node: process.version } };
  }
}
