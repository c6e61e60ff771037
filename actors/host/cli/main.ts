import { Builtins, Cli } from 'clipanion';
import { runningVersion } from '../../shared/version';
import { ApplyCommand } from './apply.command';
import { BriefingCommand } from './briefing.command';
import { EnrolCommand } from './enrol.command';
import { InventoryCommand } from './inventory.command';
import { OwnedCommand } from './owned.command';
import { ProfileCommand } from './profile.command';
import { ReconcileCommand } from './reconcile.command';
import { RunCommand } from './run.command';
import { VersionCommand } from './version.command';

/** The `nox-mesh-host` command line: the verbs a person at the machine uses. */
export function hostCli(): Cli {
  const cli = new Cli({ binaryLabel: 'Novox Mesh node host', binaryName: 'nox-mesh-host', binaryVersion: runningVersion() });
  cli.register(Builtins.HelpCommand);
  cli.register(VersionCommand);
  for (const command of [ProfileCommand, InventoryCommand, OwnedCommand, ApplyCommand, ReconcileCommand, BriefingCommand]) cli.register(command);
  cli.register(EnrolCommand);
  cli.register(RunCommand);
  return cli;
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  void hostCli().runExit(process.argv.slice(2));
}
