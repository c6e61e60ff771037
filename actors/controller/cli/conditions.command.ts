import os from 'node:os';
import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { SilenceWhyMissing } from '../conditions/condition-errors';
import { parseSilenceFor } from '../conditions/parse-silence-for';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** `--limit` of `conditions history` is not a whole number. */
export class HistoryLimitInvalid extends OperatorError {
  constructor(given: string) {
    super('--limit must be a whole number of transitions', { value: given, next: 'give --limit a number from 1 to 10000, e.g. --limit 100' });
  }
}

/** `mesh-control conditions`: the open conditions, urgent first. */
export class ConditionsCommand extends ControllerCommand {
  static override paths = [['conditions']];
  static override usage = Command.Usage({
    description: 'List the open conditions, urgent first, each with what is wrong, since when and the next step',
    details: `
      The serving controller's watchdog looks over its signals table every 30 s (a resident node's heartbeats, reports after a send, calls hung, the doctor's probes, its own event loop) and raises a condition for each signal past its bound, clearing it once the signal is no longer seen. A row of the table that cannot see raises \`probe-failed\` and clears nothing.

      A condition cleared and raised again within ten minutes is the same condition, its count up and its silence kept. Exits 0 when none is open, 1 otherwise.
    `,
    examples: [
      ['What is wrong now', 'mesh-control conditions'],
      ['The same for a monitor', 'mesh-control conditions --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'conditions', {});
    const open = (answer.result as { conditions?: unknown[] }).conditions?.length ?? 0;
    return { text: answer.text, json: answer.result, exitCode: open === 0 ? 0 : 1 };
  }
}

/** `mesh-control conditions show ID`: one condition in full. */
export class ConditionsShowCommand extends ControllerCommand {
  static override paths = [['conditions', 'show']];
  static override usage = Command.Usage({
    description: 'Show one condition in full: its signal, when it was raised and cleared, how often, its silence and its next step',
    examples: [['One condition', 'mesh-control conditions show heartbeat-silent.kitchen']],
  });

  id = Option.String({ name: 'ID' });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'conditions.show', { id: this.id });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control conditions silence ID --for DURATION --why TEXT`: a person's word that a condition may be left for now. */
export class ConditionsSilenceCommand extends ControllerCommand {
  static override paths = [['conditions', 'silence']];
  static override usage = Command.Usage({
    description: 'Silence a condition for a while (at most a week), saying why; status still shows it, as silenced',
    details: `
      A silence is a hand act: who (your login on this machine), why and until when are kept in the condition, and the change is kept in its history. A silenced condition is still open and status still says it, as silenced, not well. A silence survives a restart of the controller, and a clearing and reopening within ten minutes.
    `,
    examples: [['Leave a machine being repaired for a day', 'mesh-control conditions silence heartbeat-silent.kitchen --for 1d --why "power supply replaced tomorrow"']],
  });

  id = Option.String({ name: 'ID' });
  for = Option.String('--for', { required: true, description: 'How long: 30m, 2h, 3d, 1w (at most a week)' });
  why = Option.String('--why', { required: true, description: 'Why it may be left (kept with the silence)' });

  async run(): Promise<CommandResult> {
    // Refused here before the bus is asked; the controller checks again whatever it is sent.
    parseSilenceFor(this.for);
    if (this.why.trim() === '') throw new SilenceWhyMissing();
    const by = `${os.userInfo().username}@${os.hostname()}`;
    const answer = await callController(this.meshDir(), 'conditions.silence', { id: this.id, for: this.for, why: this.why, by });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control conditions history [ID]`: the transitions kept, newest first. */
export class ConditionsHistoryCommand extends ControllerCommand {
  static override paths = [['conditions', 'history']];
  static override usage = Command.Usage({
    description: 'List conditions\' transitions (raised, changed, cleared, silenced), newest first, kept for 90 days',
    examples: [
      ['The newest transitions', 'mesh-control conditions history'],
      ['One condition\'s', 'mesh-control conditions history heartbeat-silent.kitchen --limit 200'],
    ],
  });

  id = Option.String({ name: 'ID', required: false });
  limit = Option.String('--limit', { description: 'How many transitions (default 50, at most 10000)' });

  async run(): Promise<CommandResult> {
    const args: Record<string, unknown> = {};
    if (this.id !== undefined) args.id = this.id;
    if (this.limit !== undefined) {
      const limit = Number(this.limit);
      if (!/^\d+$/.test(this.limit) || !Number.isSafeInteger(limit)) throw new HistoryLimitInvalid(this.limit);
      args.limit = limit;
    }
    const answer = await callController(this.meshDir(), 'conditions.history', args);
    return { text: answer.text, json: answer.result };
  }
}
