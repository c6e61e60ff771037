import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { passFailed, reconcilePass } from '../reconcile/reconcile-pass';
import { formatPass } from './format-results';
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

      With --dry-run, nothing is written, run or removed: each resource is looked at and what
      would change is printed (an action whose guard is a command is reported as one that
      would run, its guard not asked). It exits 0 whether or not something would change, and
      1 when something would be refused or cannot be read, as the pass itself would.
    `,
    examples: [
      ['Put this machine back as the host holds it', '$0 reconcile'],
      ['See what a reconcile would change, changing nothing', '$0 reconcile --dry-run'],
    ],
  });

  dryRun = Option.Boolean('--dry-run', false, {
    description: 'Print what the pass would change, and change nothing: no file, no store write, no action run',
  });

  async run(): Promise<CommandResult> {
    if (this.dryRun) return this.planOn();
    return this.withHost(async (host) => {
      const report = await reconcilePass(host, ['start']);
      return { text: formatPass(report), json: report, exitCode: passFailed(report) ? 1 : 0 };
    });
  }
}
