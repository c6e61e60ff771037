import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `mesh-control status`: the acting controller's last composition of the mesh. */
export class StatusCommand extends ControllerCommand {
  static override paths = [['status']];
  static override usage = Command.Usage({
    description: 'Show the mesh as the acting controller last composed it, led by the open conditions (urgent first): the lease, nodes by state and kind, nodes away, declarations outstanding and failed, refused reports, the doctor\'s last run and open problems',
    details: `
      Leads with the open conditions (mesh-control conditions), urgent first, silenced ones said as silenced: "all well" only when none is open and no problem is; when the conditions cannot be read it says so, and not well.

      Answers at once from the last composition, saying when it was composed and how long that took. The controller composes it when it starts, after news from a node, after an acting verb, and every minute.

      A node is shown disconnected once it has missed three heartbeats of its kind (a resident host beats every 30 s, an episodic one every 5 min), and enrolled again at its next heartbeat; that is a state, not a problem. A declaration is outstanding while the node has not reported on it (ordinary for a node away), and failed once it reported something failed or refused it.

      The doctor line names the probes that did not pass in the controller's last doctor run (every five minutes); \`mesh-control doctor\` runs them now, with each one's next step.
    `,
    examples: [
      ['The mesh at a glance', 'mesh-control status'],
      ['The same, for a script', 'mesh-control status --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'status', {});
    return { text: answer.text, json: answer.result };
  }
}
