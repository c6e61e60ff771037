import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { checkHandAct } from '../hand-acts/hand-act-args';
import { HAND_ACTS_DEFAULT_SINCE } from '../hand-acts/hand-acts.part';
import { parseSince } from '../hand-acts/parse-since';
import { HAND_ACTS_KEPT_MS } from '../hand-acts/record-hand-act';
import { ControllerCommand } from './controller-command';

/** `--limit` of `hand-acts` is not a whole number from 1 to 1000. */
export class HandActsLimitInvalid extends OperatorError {
  constructor(given: string) {
    super('--limit must be a whole number of hand acts from 1 to 1000', { value: given, next: 'give --limit a number from 1 to 1000, e.g. --limit 200' });
  }
}

/** `mesh-control hand-act record --why TEXT [--condition ID]`: keep something done by hand outside the mesh's verbs. */
export class HandActRecordCommand extends ControllerCommand {
  static override paths = [['hand-act', 'record']];
  static override usage = Command.Usage({
    description: 'Record something you did by hand, with why, in the hand-act log',
    details: `
      For a repair made outside the mesh's own verbs (a broker restarted, a consumer reset, a file put right on a machine): kept with its reason, and with \`--condition\` the condition it answers, so \`mesh-control hand-acts\` can show the causes that keep coming back. Push, plans close and retry, node revoke and conditions silence record themselves.
    `,
    examples: [
      ['A repair by hand', 'mesh-control hand-act record --why "restarted the broker after its disk filled"'],
      ['Answering a condition', 'mesh-control hand-act record --why "reset kitchen\'s consumer" --condition heartbeat-missing.kitchen --json'],
    ],
  });

  why = Option.String('--why', { description: 'What you did and why, in a line (required)' });
  condition = Option.String('--condition', { description: 'The id of the condition it answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    checkHandAct('hand-act record', { why: this.why, condition: this.condition }, { example: 'mesh-control hand-act record --why "restarted the broker after its disk filled"' });
    const answer = await callController(this.meshDir(), 'hand-act.record', { why: this.why, ...(this.condition === undefined ? {} : { condition: this.condition }) });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control hand-acts [--since D] [--limit N]`: the hand-act log and the causes that came back. */
export class HandActsCommand extends ControllerCommand {
  static override paths = [['hand-acts']];
  static override usage = Command.Usage({
    description: 'List what people did by hand, newest first, and the causes given more than once',
    details: `
      Every push, plans close and retry, node revoke, conditions silence and hand-act record is kept with its reason for a year. A cause is the condition an act named or, when it named none, its reason (compared without case or spacing); one given more than once in the window is listed first, most often first: a repair that keeps being made by hand is one the mesh should make itself.

      The window is \`--since\` (default ${HAND_ACTS_DEFAULT_SINCE}, at most 365d); \`status\` counts the last seven days'.
    `,
    examples: [
      ['The last 30 days', 'mesh-control hand-acts'],
      ['The last week, for a script', 'mesh-control hand-acts --since 7d --json'],
    ],
  });

  since = Option.String('--since', { description: `How far back to look: 30m, 6h, 7d (default ${HAND_ACTS_DEFAULT_SINCE})` });
  limit = Option.String('--limit', { description: 'How many acts to list (default 50, at most 1000); the repeated causes count them all' });

  async run(): Promise<CommandResult> {
    const args: Record<string, unknown> = {};
    if (this.since !== undefined) {
      parseSince(this.since, HAND_ACTS_KEPT_MS, '365d');
      args.since = this.since;
    }
    if (this.limit !== undefined) {
      const limit = Number(this.limit);
      if (!/^\d+$/.test(this.limit) || limit < 1 || limit > 1000) throw new HandActsLimitInvalid(this.limit);
      args.limit = limit;
    }
    const answer = await callController(this.meshDir(), 'hand-acts', args);
    return { text: answer.text, json: answer.result };
  }
}
