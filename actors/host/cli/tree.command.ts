import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { formatTree } from '../../shared/supervisor/format-tree';
import { readRunningHost } from '../run/running-host';
import { HostCommand } from './host-command';

/** `nox-mesh-host tree`: the running host's supervision tree. */
export class TreeCommand extends HostCommand {
  static override paths = [['tree']];
  static override usage = Command.Usage({
    description: 'Show the running host\'s supervision tree: each actor, its state, and its restarts and last error',
    details: `
      Read from the status file the running host keeps, as nox-mesh-host status is. A host
      waiting to be enrolled has no tree yet and says so. A child that keeps failing (more than
      three times a minute) stops the host, which exits naming it.
    `,
  });

  async run(): Promise<CommandResult> {
    const status = await readRunningHost((await this.settings()).stateDir);
    if (status.tree === null) return { text: `no tree: the host (process ${status.pid}) is ${status.lifecycle}, waiting to be enrolled`, json: { pid: status.pid, lifecycle: status.lifecycle, tree: null } };
    return { text: formatTree(status.tree), json: status.tree };
  }
}
