import { Builtins, Cli, type CommandClass } from 'clipanion';
import { getDefaultColorDepth } from '../../shared/cli/clipanion-platform';
import { completionCommand } from '../../shared/cli/completion.command';
import { CONTROLLER_EXIT_STATUS_HELP } from '../../shared/cli/exit-status';
import { nameOptionPlaceholders } from '../../shared/cli/named-placeholders';
import { runCli } from '../../shared/cli/run-cli';
import { withExitStatusHelp } from '../../shared/cli/with-exit-status-help';
import { runningVersion } from '../../shared/version';
import { AssignCommand } from './assign.command';
import { BrokerCommand } from './broker.command';
import { CallsCommand } from './calls.command';
import { ConditionsCommand, ConditionsHistoryCommand, ConditionsShowCommand, ConditionsSilenceCommand } from './conditions.command';
import { DashboardCommand } from './dashboard.command';
import { DoctorCommand } from './doctor.command';
import { DurationsCommand } from './durations.command';
import { HandActRecordCommand, HandActsCommand } from './hand-acts.command';
import { InitCommand } from './init.command';
import { ModuleAddCommand } from './module-add.command';
import { NodeDeclareCommand } from './node-declare.command';
import { NodeReleaseCommand } from './node-release.command';
import { NodeRevokeCommand } from './node-revoke.command';
import { BrokerRotateCertificateCommand } from './broker-rotate-certificate.command';
import { BrokerClusterCommand } from './broker-cluster.command';
import { BrokerSyncCommand } from './broker-sync.command';
import { NodesCommand } from './nodes.command';
import { PlansCloseCommand, PlansCommand, PlansRetryCommand, PlansShowCommand } from './plans.command';
import { PushCommand } from './push.command';
import { ProvisionsCommand, RotateCommand } from './rotate.command';
import { SecretListCommand, SecretSetCommand, SecretUnsetCommand } from './secret.command';
import { SeatCommand, SeatsCommand } from './seat.command';
import { ServeCommand } from './serve.command';
import { StatusCommand } from './status.command';
import { TokenIssueCommand } from './token-issue.command';
import { TreeCommand } from './tree.command';
import { UnassignCommand } from './unassign.command';
import { VersionCommand } from './version.command';
import { quietOnClosedOutput } from '../../shared/cli/quiet-on-closed-output';

/** The `mesh-control` command line: the controller's verbs. */
export function controlCli(stdout: Pick<NodeJS.WriteStream, 'isTTY'> & Partial<Pick<NodeJS.WriteStream, 'getColorDepth'>> = process.stdout): Cli {
  const cli = new Cli({
    binaryLabel: 'Novox Mesh controller',
    binaryName: 'mesh-control',
    binaryVersion: runningVersion(),
    enableColors: getDefaultColorDepth(stdout) > 1,
  });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  const verbs: CommandClass[] = [InitCommand, BrokerCommand, ServeCommand, TokenIssueCommand, NodesCommand, NodeReleaseCommand, NodeRevokeCommand, NodeDeclareCommand, StatusCommand, DoctorCommand, TreeCommand, CallsCommand];
  verbs.push(ConditionsCommand, ConditionsShowCommand, ConditionsSilenceCommand, ConditionsHistoryCommand);
  verbs.push(ModuleAddCommand, AssignCommand, UnassignCommand, PlansCommand, PlansShowCommand, PlansCloseCommand, PlansRetryCommand, PushCommand);
  verbs.push(HandActRecordCommand, HandActsCommand, DurationsCommand);
  verbs.push(BrokerRotateCertificateCommand);
  verbs.push(DashboardCommand);
  verbs.push(SecretSetCommand, SecretListCommand, SecretUnsetCommand);
  verbs.push(SeatCommand, SeatsCommand);
  verbs.push(BrokerClusterCommand, BrokerSyncCommand);
  verbs.push(RotateCommand, ProvisionsCommand);
  verbs.push(VersionCommand, completionCommand('mesh-control'));
  for (const command of verbs) cli.register(withExitStatusHelp(command, CONTROLLER_EXIT_STATUS_HELP));
  return nameOptionPlaceholders(cli);
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  quietOnClosedOutput();
  void runCli(() => controlCli(), process.argv.slice(2), 'mesh-control').then((status) => {
    process.exitCode = status;
  });
}
