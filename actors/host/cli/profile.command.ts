import { Command, Option } from 'clipanion';
import { MeshCommand, type CommandResult } from '../../shared/cli/mesh-command';
import { detectProfile } from '../profile/detect-profile';
import { formatProfile } from '../profile/format-profile';
import { requireRootDirectory } from '../profile/root-directory';
import { runnerFrom } from '../profile/runner-context';

/**
 * `nox-mesh-host profile`: what this machine can do (os, architecture, init, package manager,
 * container runtime, desktop, host kind). The same value the host reports at enrolment, which
 * the controller decides from.
 */
export class ProfileCommand extends MeshCommand {
  static override paths = [['profile']];
  static override usage = Command.Usage({
    description: 'Print what this machine can do: the profile the controller decides from',
    details: `
      Reads the machine's files only (os-release, the init's run directory, the package
      database, the container engine's program, display sockets); nothing is started or
      changed, so it answers on a machine whose tools are broken. The same profile is sent to
      the controller at enrolment.
    `,
    examples: [
      ['Describe this machine', '$0 profile'],
      ['Describe a machine mounted at /mnt/target, as JSON', '$0 profile --root /mnt/target --json'],
    ],
  });

  root = Option.String('--root', '/', {
    description: 'Read the machine whose root directory is at this path (a mounted disk or image) instead of this one; default /',
  });

  async run(): Promise<CommandResult> {
    const root = await requireRootDirectory(this.root);
    const profile = await detectProfile({ root, runner: runnerFrom(this.context) });
    return { text: formatProfile(profile), json: profile };
  }
}
