import { Builtins, Cli } from 'clipanion';
import { runningVersion } from '../../shared/version';
import { notBuiltCommand } from '../../shared/cli/not-built';
import { BrokerCommand } from './broker.command';
import { InitCommand } from './init.command';
import { NodeDeclareCommand } from './node-declare.command';
import { NodeReleaseCommand } from './node-release.command';
import { NodesCommand } from './nodes.command';
import { ServeCommand } from './serve.command';
import { TokenIssueCommand } from './token-issue.command';

/** The `mesh-control` command line: the controller's verbs. */
export function controlCli(): Cli {
  const cli = new Cli({ binaryLabel: 'Novox Mesh controller', binaryName: 'mesh-control', binaryVersion: runningVersion() });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  for (const command of [InitCommand, BrokerCommand, ServeCommand, TokenIssueCommand, NodesCommand, NodeReleaseCommand, NodeDeclareCommand]) cli.register(command);
  const controller = 'the controller (issue "The controller as a supervised actor system")';
  for (const verb of ['status', 'tree', 'calls']) cli.register(notBuiltCommand([verb], controller));
  const plans = 'modules and plans (issue "Modules, assignment and staged rollout plans")';
  for (const verb of [['module', 'add'], ['assign'], ['unassign'], ['plans'], ['push']]) cli.register(notBuiltCommand(verb, plans));
  return cli;
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  void controlCli().runExit(process.argv.slice(2));
}
