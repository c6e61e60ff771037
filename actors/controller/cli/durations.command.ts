import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { DURATION_KINDS, DURATIONS_KEPT_MS } from '../durations/duration-recorder';
import { DURATIONS_DEFAULT_SINCE } from '../durations/durations.part';
import { parseSince } from '../hand-acts/parse-since';
import { ControllerCommand } from './controller-command';

/** `--kind` names no kind of duration the controller measures. */
export class DurationKindUnknown extends OperatorError {
  constructor(given: string) {
    super('--kind names no kind of duration the controller measures', { value: given, next: `give one of ${DURATION_KINDS.join(', ')}, or leave out --kind for all` });
  }
}

/** `mesh-control durations [--kind K] [--since D]`: how long things took, as the controller heard them. */
export class DurationsCommand extends ControllerCommand {
  static override paths = [['durations']];
  static override usage = Command.Usage({
    description: 'Show how long things took, per kind: count, median, p90 and p99 over a window',
    details: `
      Recorded the moment the controller hears each one end: \`apply\`, from a declaration's send to the node's first report on it; \`heartbeat-gap\`, between two heartbeats of a node (the first after the controller starts measures nothing); \`plan-tier\`, a plan's first machine from its send to its report that it applied, and the rest from their send to the last.

      Counted in five-minute windows and logarithmic bins, so quantiles are within about 5 % and the window starts at the five minutes \`--since\` falls in (default ${DURATIONS_DEFAULT_SINCE}, at most 30d; older windows are pruned).
    `,
    examples: [
      ['The last day', 'mesh-control durations'],
      ['Heartbeat gaps over the last hour, for a script', 'mesh-control durations --kind heartbeat-gap --since 1h --json'],
    ],
  });

  kind = Option.String('--kind', { description: `Only this kind: ${DURATION_KINDS.join(', ')}` });
  since = Option.String('--since', { description: `How far back to look: 30m, 6h, 7d (default ${DURATIONS_DEFAULT_SINCE})` });

  async run(): Promise<CommandResult> {
    const args: Record<string, unknown> = {};
    if (this.kind !== undefined) {
      if (!(DURATION_KINDS as readonly string[]).includes(this.kind)) throw new DurationKindUnknown(this.kind);
      args.kind = this.kind;
    }
    if (this.since !== undefined) {
      parseSince(this.since, DURATIONS_KEPT_MS, '30d');
      args.since = this.since;
    }
    const answer = await callController(this.meshDir(), 'durations', args);
    return { text: answer.text, json: answer.result };
  }
}
