import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { askDoctor } from '../doctor/ask-doctor';
import { formatDoctor } from '../doctor/format-doctor';
import { ControllerCommand } from './controller-command';

/** `mesh-control doctor`: every probe of the mesh's health, from the serving controller or the mesh directory. */
export class DoctorCommand extends ControllerCommand {
  static override paths = [['doctor']];
  static override usage = Command.Usage({
    description: 'Probe the mesh: store migrated, broker, declaration stream and consumers, lease, certificate, nodes\' reports, declarations the hosts would accept',
    details: `
      Asks the serving controller to run every probe (it also runs them every five minutes and shows the failing ones in \`mesh-control status\`). Each probe takes at most 30 s; one that times out, throws or cannot reach what it needs is \`cannot-run\`, never a pass.

      When no controller answers, probes what the mesh directory alone shows (store, broker, stream and consumers, certificate, reports, declarations) and fails the \`controller\` probe, naming \`mesh-control serve --dir DIR\`.

      One line per probe, failures first, each with its next step. Exits 0 when every probe passes (a warning, such as a certificate ending within 30 days, still passes), 1 when any fails or cannot run.
    `,
    examples: [
      ['Probe the mesh in /var/lib/mesh-control', 'mesh-control doctor'],
      ['The same for a script or a monitor, one JSON document', 'mesh-control doctor --dir /srv/mesh --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const report = await askDoctor(this.meshDir());
    return { text: formatDoctor(report, new Date()), json: report, exitCode: report.ok ? 0 : 1 };
  }
}
