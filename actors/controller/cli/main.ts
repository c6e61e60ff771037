import { Builtins, Cli } from 'clipanion';
import { runningVersion } from '../../shared/version';
import { notBuiltCommand } from '../../shared/cli/not-built';

/** The `mesh-control` command line: the controller's verbs. */
export function controlCli(): Cli {
  const cli = new Cli({ binaryLabel: 'Novox Mesh controller', binaryName: 'mesh-control', binaryVersion: runningVersion() });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  const enrolment = 'enrolment (issue "Enrolment over a pinned broker")';
  cli.register(notBuiltCommand(['init'], enrolment));
  cli.register(notBuiltCommand(['broker'], enrolment));
  cli.register(notBuiltCommand(['token', 'issue'], enrolment));
  cli.register(notBuiltCommand(['nodes'], enrolment));
  cli.register(notBuiltCommand(['node', 'release'], enrolment));
  const controller = 'the controller (issue "The controller as a supervised actor system")';
  for (const verb of ['serve', 'status', 'tree', 'calls']) cli.register(notBuiltCommand([verb], controller));
  const plans = 'modules and plans (issue "Modules, assignment and staged rollout plans")';
  for (const verb of [['module', 'add'], ['assign'], ['unassign'], ['plans'], ['push']]) cli.register(notBuiltCommand(verb, plans));
  return cli;
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  void controlCli().runExit(process.argv.slice(2));
}
