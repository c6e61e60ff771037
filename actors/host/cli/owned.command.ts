import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { HostStore } from '../store/host-store';
import { formatTable } from '../../shared/cli/format-table';
import { HostCommand } from './host-command';

/** `nox-mesh-host owned`: what the host thinks it owns (rescue: "what do you think you own?"). */
export class OwnedCommand extends HostCommand {
  static override paths = [['owned']];
  static override usage = Command.Usage({
    description: 'List what the host owns: every resource it applied and recorded, and what it adopted',
  });

  async run(): Promise<CommandResult> {
    const { stateDir } = await this.settings();
    const loaded = await new HostStore(stateDir).load();
    if (loaded.problem !== undefined) this.context.stderr.write(`warning: ${loaded.problem}\n`);
    const owned = loaded.state.owned.resources;
    const rows = owned.map((r) => [r.key, r.recorded_at, r.adopted ? `adopted${r.original_kept_at ? `, original at ${r.original_kept_at}` : ''}` : '']);
    const text = owned.length === 0 ? `the host owns nothing (store: ${stateDir})` : formatTable(rows, ['resource', 'recorded', '']);
    return { text, json: loaded.state.owned };
  }
}
