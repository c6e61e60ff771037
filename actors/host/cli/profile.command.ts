import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { detectProfile } from '../profile/detect-profile';
import { formatProfile } from '../profile/format-profile';
import { runnerFrom } from '../profile/runner-context';
import { MachineCommand } from './machine-command';

/**
 * `nox-mesh-host profile`: what this machine can do (os, architecture, init, package manager,
 * container runtime, desktop, host kind). The same value the host reports at enrolment, which
 * the controller decides from.
 */
export class ProfileCommand extends MachineCommand {
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

  async run(): Promise<CommandResult> {
    const root = await this.rootDirectory();
    const profile = await detectProfile({ root, runner: runnerFrom(this.context) });
    return { text: formatProfile(profile), json: profile };
  }
}
