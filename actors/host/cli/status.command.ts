import { Command } from 'clipanion';
import { EXIT } from '../../shared/cli/exit-status';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { readRunningHost } from '../run/running-host';
import { formatStatus } from './format-status';
import { HostCommand } from './host-command';

/** `nox-mesh-host status`: how the running host is, read from the status file it keeps. */
export class StatusCommand extends HostCommand {
  static override paths = [['status']];
  static override usage = Command.Usage({
    description: 'Show the running host: its lifecycle state, its link, its last pass and the last declaration',
    details: `
      Read from the status file the running host rewrites whenever something changes
      (host-status.json in its state directory): nothing is asked of the host, which opens no
      socket. A host that is not running is said to be so, and the status is 1. A host that runs
      but cannot link because the broker presents a certificate it does not pin (the mesh rotated
      its broker certificate while this machine was away) says what to do, and the status is 5.
    `,
  });

  async run(): Promise<CommandResult> {
    const status = await readRunningHost((await this.settings()).stateDir);
    // A distinct status, so a script can tell "running but cut off until enrolled again".
    const unpinned = status.certificate_unpinned !== undefined && status.stopped === undefined;
    return { text: formatStatus(status, new Date()), json: { running: true, ...status }, ...(unpinned ? { exitCode: EXIT.brokerNotPinned } : {}) };
  }
}
