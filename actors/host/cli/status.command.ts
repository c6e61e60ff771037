import { Command } from 'clipanion';
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
      socket. A host that is not running is said to be so, and the status is 1.
    `,
  });

  async run(): Promise<CommandResult> {
    const status = await readRunningHost((await this.settings()).stateDir);
    return { text: formatStatus(status, new Date()), json: { running: true, ...status } };
  }
}
