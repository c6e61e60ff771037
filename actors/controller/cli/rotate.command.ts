import { Command, Option } from 'clipanion';
import { ModuleName } from '../../../schema/module';
import { parseContract } from '../../../schema/parse';
import { NodeName } from '../../../schema/primitives';
import { ProvisionName } from '../../../schema/provision';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { checkHandAct } from '../hand-acts/hand-act-args';
import { ControllerCommand } from './controller-command';

/** `mesh-control rotate PROVISION [--consumer NODE] [--module MODULE]`: replace issued credentials. */
export class RotateCommand extends ControllerCommand {
  static override paths = [['rotate']];
  static override usage = Command.Usage({
    description: "Replace a provision's credentials: every consumer's, or only one machine's or one module's",
    details: `
      Each module that consumes a provision holds a credential of its own on each machine. \`rotate PROVISION\` replaces every one; \`--consumer NODE\` only those on that machine; \`--module MODULE\` only that module's (on every machine, or on the one \`--consumer\` names). The narrowest act is one module on one machine.

      The providers are sent their new lists of accepted credentials first, then the consumers whose credentials changed. No other node is sent anything, and a consumer whose credential was not replaced keeps its file byte for byte. On a node, only a service that names the changed file in its \`restart_on\` is restarted.

      A rotation is a hand act: \`--why\` is required, and it is kept in the hand-act log (\`mesh-control hand-acts\`). \`mesh-control provisions\` lists what is issued.
    `,
    examples: [
      ['One leaked credential: module app on node beta', 'mesh-control rotate app-database --consumer beta --module app --why "printed in a crash log"'],
      ['Every consumer of a provision', 'mesh-control rotate app-database --why "yearly rotation" --json'],
    ],
  });

  provision = Option.String({ name: 'PROVISION' });
  consumer = Option.String('--consumer', { description: 'Only the credentials held on this node' });
  module = Option.String('--module', { description: 'Only the credentials of this consuming module' });
  why = Option.String('--why', { description: 'Why you rotate, in a line (required): kept in the hand-act log' });
  condition = Option.String('--condition', { description: 'The id of the condition this rotation answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    const provision = parseContract(ProvisionName, this.provision, 'provision name', { next: 'give the provision as a module.json names it under "provides" (mesh-control provisions lists them)' });
    const args: Record<string, unknown> = { provision };
    if (this.consumer !== undefined) args.consumer = parseContract(NodeName, this.consumer, 'node name', { next: 'give --consumer a node name as mesh-control nodes lists it' });
    if (this.module !== undefined) args.module = parseContract(ModuleName, this.module, 'module name', { next: 'give --module the consuming module as its module.json names it' });
    checkHandAct('rotate', { why: this.why, condition: this.condition }, { example: `mesh-control rotate ${provision} --why "its credential leaked"` });
    args.why = this.why;
    if (this.condition !== undefined) args.condition = this.condition;
    const answer = await callController(this.meshDir(), 'rotate', args);
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control provisions`: the providers, how they stand, and the credentials issued. */
export class ProvisionsCommand extends ControllerCommand {
  static override paths = [['provisions']];
  static override usage = Command.Usage({
    description: 'List the providers of each provision, whether each is failing, and the credentials issued (never a value)',
    details: `
      A provider is failing while its node's latest report has a service of the providing module failed; it is named in \`mesh-control status\`, with its consumers, until a later report has it running again.
    `,
    examples: [
      ['What is provided and issued', 'mesh-control provisions'],
      ['The same, for a script', 'mesh-control provisions --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'provisions', {});
    return { text: answer.text, json: answer.result };
  }
}
