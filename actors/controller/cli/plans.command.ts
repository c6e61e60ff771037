import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { checkHandAct } from '../hand-acts/hand-act-args';
import { ControllerCommand } from './controller-command';

/** A plan id on the command line that is not a whole number. */
export class PlanIdInvalid extends OperatorError {
  constructor(given: string) {
    super('a plan id is a whole number', { value: given, next: 'list the plans and their ids with mesh-control plans' });
  }
}

function planId(given: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(given)) throw new PlanIdInvalid(given);
  return Number(given);
}

/** The hand act's arguments a verb was given, leaving out those not given. */
function handActArgs(why: string | undefined, condition: string | undefined): Record<string, string> {
  return { ...(why === undefined ? {} : { why }), ...(condition === undefined ? {} : { condition }) };
}

/** `mesh-control plans`: the open plans (with --all, the ended ones too). */
export class PlansCommand extends ControllerCommand {
  static override paths = [['plans'], ['plans', 'list']];
  static override usage = Command.Usage({
    description: 'List the rollout plans: the open ones, or with --all every one',
    details: `
      A plan rolls a new module revision out to the nodes running an older one, by the module's upgrade policy. Its state: \`held\` (record: waits for pushes), \`sendingFirst\` and \`awaitingFirst\` (one-first: the first machine is sent, then its report awaited), \`sending\`, \`stopped\` (the note names the machine and why: retry or close it), or ended: \`done\`, \`closed\`, \`superseded\`.
    `,
    examples: [['The open plans', 'mesh-control plans'], ['Every plan', 'mesh-control plans --all']],
  });

  all = Option.Boolean('--all', false, { description: 'List the ended plans too' });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'plans.list', this.all ? { all: true } : {});
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control plans show ID`: one plan, node by node. */
export class PlansShowCommand extends ControllerCommand {
  static override paths = [['plans', 'show']];
  static override usage = Command.Usage({
    description: 'Show one plan: its state, its note, and each node sent, failed, skipped or not sent',
    examples: [['Plan 4', 'mesh-control plans show 4']],
  });

  id = Option.String({ name: 'ID' });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'plans.show', { id: planId(this.id) });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control plans close ID`: end a plan by hand. */
export class PlansCloseCommand extends ControllerCommand {
  static override paths = [['plans', 'close']];
  static override usage = Command.Usage({
    description: 'Close a plan: nothing more is sent under it, and it says what it never sent',
    details: `
      Nodes it did not send keep the revision they have; \`push NODE\` sends one the newest.

      Closing is a hand act, kept in the hand-act log (\`mesh-control hand-acts\`) with \`--why\` and \`--condition\` when given.
    `,
    examples: [['Close plan 4', 'mesh-control plans close 4'], ['The same, kept with why', 'mesh-control plans close 4 --why "the first machine is a lab box; the rest need not wait" --condition plan-tier-late.4']],
  });

  id = Option.String({ name: 'ID' });
  why = Option.String('--why', { description: 'Why, in a line: kept in the hand-act log (mesh-control hand-acts)' });
  condition = Option.String('--condition', { description: 'The id of the condition this answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    const id = planId(this.id);
    checkHandAct('plans close', { why: this.why, condition: this.condition }, false);
    const answer = await callController(this.meshDir(), 'plans.close', { id, ...handActArgs(this.why, this.condition) });
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control plans retry ID`: let a stopped plan go on. */
export class PlansRetryCommand extends ControllerCommand {
  static override paths = [['plans', 'retry']];
  static override usage = Command.Usage({
    description: 'Retry a stopped plan: the first machine again, or the nodes not yet sent',
    details: `
      Under one-first, a plan that stopped at its first machine sends that machine the revision again and waits for its report; one that stopped later sends the nodes it had not sent. A superseded plan cannot be retried: the newer plan holds its nodes.

      Retrying is a hand act, kept in the hand-act log (\`mesh-control hand-acts\`) with \`--why\` and \`--condition\` when given.
    `,
    examples: [['Retry plan 4', 'mesh-control plans retry 4'], ['The same, kept with why', 'mesh-control plans retry 4 --why "the first machine was rebooted mid-apply" --condition plan-tier-late.4']],
  });

  id = Option.String({ name: 'ID' });
  why = Option.String('--why', { description: 'Why, in a line: kept in the hand-act log (mesh-control hand-acts)' });
  condition = Option.String('--condition', { description: 'The id of the condition this answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    const id = planId(this.id);
    checkHandAct('plans retry', { why: this.why, condition: this.condition }, false);
    const answer = await callController(this.meshDir(), 'plans.retry', { id, ...handActArgs(this.why, this.condition) });
    return { text: answer.text, json: answer.result };
  }
}
