import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { OperatorError } from '../../shared/operator-error';
import { ControllerCommand } from './controller-command';

/** `--limit` is not a whole number. */
export class LimitInvalid extends OperatorError {
  constructor(given: string) {
    super('--limit must be a whole number of calls', { value: given, next: 'give --limit a number from 1 to 1000, e.g. --limit 50' });
  }
}

/** `mesh-control calls [ID]`: how acting verbs' calls went, kept across restarts. */
export class CallsCommand extends ControllerCommand {
  static override paths = [['calls']];
  static override usage = Command.Usage({
    description: 'List the acting verbs\' calls, newest first, or show one call in full',
    details: `
      Every acting verb (token issue, node declare, node release, …) is kept as a call: who asked, when, and the answer or refusal it was given. A verb that runs longer than about ten seconds answers "running" with its call id; this shows how it ended. Calls are kept for 14 days (the last 1,000), across restarts of the controller; a call left running by a controller that stopped is marked abandoned.
    `,
    examples: [
      ['The newest calls', 'mesh-control calls'],
      ['One call in full', 'mesh-control calls mj2k9x1qz-3fa9c1d2'],
    ],
  });

  id = Option.String({ name: 'ID', required: false });
  limit = Option.String('--limit', { description: 'How many calls to list (default 20, at most 1000)' });

  async run(): Promise<CommandResult> {
    const args: Record<string, unknown> = {};
    if (this.id !== undefined) args.id = this.id;
    if (this.limit !== undefined) {
      const limit = Number(this.limit);
      if (!/^\d+$/.test(this.limit) || !Number.isSafeInteger(limit)) throw new LimitInvalid(this.limit);
      args.limit = limit;
    }
    const answer = await callController(this.meshDir(), 'calls', args);
    return { text: answer.text, json: answer.result };
  }
}
