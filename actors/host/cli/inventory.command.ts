import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { collectInventory } from '../profile/detect-inventory';
import { detectProfile } from '../profile/detect-profile';
import { formatInventory } from '../profile/format-inventory';
import { runnerFrom } from '../profile/runner-context';
import { MachineCommand } from './machine-command';

/**
 * `nox-mesh-host inventory`: what this machine already has (installed packages, services,
 * containers). The same value the host reports at enrolment; adoption compares against it.
 */
export class InventoryCommand extends MachineCommand {
  static override paths = [['inventory']];
  static override usage = Command.Usage({
    description: 'Print what this machine already has: installed packages, services and containers',
    details: `
      Packages are read from the package database under the root. Services and containers
      are asked of the running init and container engine, which answer for the booted
      machine only, so with --root those sections are not listed. A section that cannot be
      listed is said in place of its table (under --json: on stderr, the document on stdout
      stays the inventory alone) and does not fail the command.
    `,
    examples: [
      ['List what this machine has', '$0 inventory'],
      ['List the packages of a machine mounted at /mnt/target, as JSON', '$0 inventory --root /mnt/target --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const root = await this.rootDirectory();
    const runner = runnerFrom(this.context);
    const profile = await detectProfile({ root, runner });
    const { inventory, gaps } = await collectInventory({ root, runner, profile });
    if (this.json) {
      for (const gap of gaps) this.context.stderr.write(`warning: ${gap.section} not listed: ${gap.reason}\n`);
    }
    return { text: formatInventory(inventory, gaps), json: inventory };
  }
}
