import { Command } from 'clipanion';
import { briefingOutcome, formatBriefing } from '../../../schema/briefing';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { withLookAt } from '../adoption/look-at';
import { HostStore } from '../store/host-store';
import { HostCommand } from './host-command';

/** `nox-mesh-host briefing`: what adoption found, took over and could not resolve. */
export class BriefingCommand extends HostCommand {
  static override paths = [['briefing']];
  static override usage = Command.Usage({
    description: 'Show the adoption briefing: what the first apply found on this machine and what to look at',
    details: 'The outcome is the worst line: a briefing never reads fine while it carries a failed line.',
  });

  async run(): Promise<CommandResult> {
    const { stateDir } = await this.settings();
    const loaded = await new HostStore(stateDir).load();
    if (loaded.problem !== undefined) this.context.stderr.write(`warning: ${loaded.problem}\n`);
    const briefing = loaded.state.briefing;
    if (briefing === null) return { text: 'no briefing: the host holds nothing here that it did not create (nothing adopted, or all of it handed back)', json: { briefing: null } };
    const current = withLookAt(briefing);
    return { text: formatBriefing(current), json: { outcome: briefingOutcome(current), briefing: current } };
  }
}
