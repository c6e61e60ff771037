import { Builtins, Cli } from 'clipanion';
import { runningVersion } from '../../shared/version';
import { AssignCommand } from './assign.command';
import { BrokerCommand } from './broker.command';
import { CallsCommand } from './calls.command';
import { DoctorCommand } from './doctor.command';
import { InitCommand } from './init.command';
import { ModuleAddCommand } from './module-add.command';
import { NodeDeclareCommand } from './node-declare.command';
import { NodeReleaseCommand } from './node-release.command';
import { NodeRevokeCommand } from './node-revoke.command';
import { BrokerRotateCertificateCommand } from './broker-rotate-certificate.command';
import { NodesCommand } from './nodes.command';
import { PlansCloseCommand, PlansCommand, PlansRetryCommand, PlansShowCommand } from './plans.command';
import { PushCommand } from './push.command';
import { ServeCommand } from './serve.command';
import { StatusCommand } from './status.command';
import { TokenIssueCommand } from './token-issue.command';
import { TreeCommand } from './tree.command';
import { UnassignCommand } from './unassign.command';
import { quietOnClosedOutput } from '../../shared/cli/quiet-on-closed-output';

/** The `mesh-control` command line: the controller's verbs. */
export function controlCli(): Cli {
  const cli = new Cli({ binaryLabel: 'Novox Mesh controller', binaryName: 'mesh-control', binaryVersion: runningVersion() });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  for (const command of [InitCommand, BrokerCommand, ServeCommand, TokenIssueCommand, NodesCommand, NodeReleaseCommand, NodeRevokeCommand, NodeDeclareCommand, StatusCommand, DoctorCommand, TreeCommand, CallsCommand]) cli.register(command);
  for (const command of [ModuleAddCommand, AssignCommand, UnassignCommand, PlansCommand, PlansShowCommand, PlansCloseCommand, PlansRetryCommand, PushCommand]) cli.register(command);
  cli.register(BrokerRotateCertificateCommand);
  return cli;
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  quietOnClosedOutput();
  void controlCli().runExit(process.argv.slice(2));
}
