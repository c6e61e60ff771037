import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { reconcilePass } from '../reconcile/reconcile-pass';
import { anyFailed, formatPass } from './format-results';
import { HostCommand } from './host-command';

/** `nox-mesh-host reconcile`: one pass now — make the machine match what the store holds. */
export class ReconcileCommand extends HostCommand {
  static override paths = [['reconcile']];
  static override usage = Command.Usage({
    description: 'Make the machine match what the host holds, now, and say what changed',
    details: `
      Applies what differs from the last declaration (verified again against the controller's
      key) and what was applied by hand, reads every change back, and removes what the host
      owns and no longer holds. The running host does this on start, on reconnect, when a
      declaration arrives and every ten minutes.
    `,
  });

  async run(): Promise<CommandResult> {
    return this.withHost(async (host) => {
      const report = await reconcilePass(host, ['start']);
      return { text: formatPass(report), json: report, exitCode: anyFailed(report) ? 1 : 0 };
    });
  }
}
